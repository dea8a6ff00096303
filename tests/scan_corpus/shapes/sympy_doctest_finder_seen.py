import inspect


class DocTestFinder:
    # stdlib doctest.DocTestFinder.find: a fresh ``seen`` dict per call
    def find(self, obj, name=None, module=None, globs=None):
        tests = []
        self._find(tests, obj, name, module, None, globs, {})
        return tests


class SymPyDocTestFinder(DocTestFinder):
    _recurse = True

    def _find(self, tests, obj, name, module, source_lines, globs, seen):
        # If we've already processed this object, then ignore it.
        if id(obj) in seen:
            return
        seen[id(obj)] = 1  # corpus: sink

        test = self._get_test(obj, name, module, globs, source_lines)
        if test is not None:
            tests.append(test)

        if not self._recurse:
            return

        if inspect.ismodule(obj):
            for rawname, val in obj.__dict__.items():
                if inspect.isfunction(val) or inspect.isclass(val):
                    valname = '%s.%s' % (name, rawname)
                    self._find(tests, val, valname, module,
                               source_lines, globs, seen)

    def _get_test(self, obj, name, module, globs, source_lines):
        return None
