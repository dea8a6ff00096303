class Expr:
    def __init__(self, ptr):
        self.ptr = ptr


class template:
    pass


class TaichiCallableTemplateMapper:
    def __init__(self, annotations, template_slot_locations):
        self.annotations = annotations
        self.num_args = len(annotations)
        self.template_slot_locations = template_slot_locations
        self.mapping = {}

    @staticmethod
    def extract_arg(arg, anno):
        if isinstance(anno, template):
            if isinstance(arg, Expr):
                return arg.ptr.get_underlying_ptr_address()
            if isinstance(arg, tuple):
                return tuple(
                    TaichiCallableTemplateMapper.extract_arg(item, anno)
                    for item in arg)
            return arg
        return (type(arg).__name__, )

    def extract(self, args):
        extracted = []
        for arg, anno in zip(args, self.annotations):
            extracted.append(self.extract_arg(arg, anno))
        return tuple(extracted)

    def lookup(self, args):
        key = self.extract(args)
        if key not in self.mapping:
            count = len(self.mapping)
            self.mapping[key] = count  # corpus: sink
        return self.mapping[key], key


class Func:
    def __init__(self, func, argument_annotations, template_slot_locations):
        self.func = func
        self.compiled = {}
        self.mapper = TaichiCallableTemplateMapper(
            argument_annotations, template_slot_locations)

    def __call__(self, *args):
        instance_id, arg_features = self.mapper.lookup(args)
        if instance_id not in self.compiled:
            self.compiled[instance_id] = self.func
        return self.compiled[instance_id](*args)
