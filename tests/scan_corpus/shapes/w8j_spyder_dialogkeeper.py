class QObject(object):
    def __init__(self):
        pass


class DialogKeeper(QObject):
    def __init__(self):
        QObject.__init__(self)
        self.dialogs = {}
        self.namespace = None

    def set_namespace(self, namespace):
        self.namespace = namespace

    def create_dialog(self, dialog, refname, func):
        self.dialogs[id(dialog)] = dialog, refname, func  # corpus: sink
        dialog.accepted.connect(
            lambda eid=id(dialog): self.editor_accepted(eid))
        dialog.rejected.connect(
            lambda eid=id(dialog): self.editor_rejected(eid))
        dialog.show()

    def editor_accepted(self, dialog_id):
        dialog, refname, func = self.dialogs[dialog_id]
        self.namespace[refname] = func(dialog)
        self.dialogs.pop(dialog_id)

    def editor_rejected(self, dialog_id):
        self.dialogs.pop(dialog_id)


keeper = DialogKeeper()


def oedit(dialog, obj_name, end_func):
    keeper.create_dialog(dialog, obj_name, end_func)
