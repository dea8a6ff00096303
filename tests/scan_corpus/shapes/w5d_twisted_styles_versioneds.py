# twisted/persisted/styles.py: module-global versionedsToUpgrade keyed by id(self) whose value is self
versionedsToUpgrade = {}
upgraded = {}


def doUpgrade():
    global versionedsToUpgrade, upgraded
    for versioned in list(versionedsToUpgrade.values()):
        requireUpgrade(versioned)
    versionedsToUpgrade = {}
    upgraded = {}


def requireUpgrade(obj):
    objID = id(obj)
    if objID in versionedsToUpgrade and objID not in upgraded:
        upgraded[objID] = 1
        obj.versionUpgrade()
        return obj


class Versioned:
    def __setstate__(self, state):
        versionedsToUpgrade[id(self)] = self  # corpus: sink
        self.__dict__ = state

    def versionUpgrade(self):
        pass
