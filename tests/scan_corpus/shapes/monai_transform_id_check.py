class InvertibleTransform:
    def trace_info(self):
        return {"class": type(self).__name__, "id": id(self)}

    def check_transforms_match(self, transform):
        xform_id = transform.get("id", "")
        if xform_id == id(self):  # corpus: sink
            return True
        return transform.get("class") == type(self).__name__
