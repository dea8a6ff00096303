# OpenGL/GLU/glustruct.py: GLUStruct.dataPointers, original-object-return table keyed by id(object)
import ctypes


class GLUStruct(object):
    def noteObject(self, object):
        identity = id(object)  # corpus: sink
        try:
            self.dataPointers[identity] = object  # corpus: sink
        except AttributeError:
            self.dataPointers = {identity: object}
        return identity

    def originalObject(self, voidPointer):
        if isinstance(voidPointer, int):
            identity = voidPointer
        elif voidPointer is None:
            return None
        else:
            try:
                identity = voidPointer.value
            except AttributeError:
                identity = voidPointer[0]
        try:
            return self.dataPointers[identity]  # corpus: sink
        except (KeyError, AttributeError):
            return voidPointer
