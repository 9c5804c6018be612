"""Enough of coffea's NanoEvents and uproot's file objects for the decorator."""


class Events(list):
    """len(), .metadata and .attrs, as NanoEvents have."""

    def __init__(self, n, factory=None, **metadata):
        super().__init__(range(n))
        self.metadata = metadata
        self.attrs = {"@events_factory": factory} if factory is not None else {}


class Branch:
    def __init__(self, compressed, uncompressed):
        self.compressed_bytes = compressed
        self.uncompressed_bytes = uncompressed


class Tree:
    def __init__(self, branches):
        self.branches = branches
        self.compressed_bytes = sum(b.compressed_bytes for b in branches.values())
        self.uncompressed_bytes = sum(b.uncompressed_bytes for b in branches.values())

    def keys(self):
        return list(self.branches)

    def __getitem__(self, name):
        return self.branches[name]


class Source:
    num_requested_bytes = 0


class File:
    def __init__(self):
        self.source = Source()


class FileHandle:
    def __init__(self, trees):
        self.trees = trees
        self.file = File()

    def __getitem__(self, name):
        return self.trees[name]


class Access:
    def __init__(self, branch):
        self.branch = branch


class Factory:
    """events.attrs["@events_factory"]: file_handle and access_log."""

    def __init__(self, treename="Events"):
        tree = Tree({"nMuon": Branch(100, 400), "Muon_pt": Branch(300, 900),
                     "Jet_pt": Branch(600, 1700)})
        self.file_handle = FileHandle({treename: tree})
        self.access_log = []

    def read(self, branch, nbytes):
        self.access_log.append(Access(branch))
        self.file_handle.file.source.num_requested_bytes += nbytes
