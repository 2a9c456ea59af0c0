"""A stored file as an S3-style storage hands it out: readable, but without a local path."""


class NoPathFile:
    def __init__(self, field_file):
        self._field_file = field_file
        self.name = field_file.name

    def __bool__(self):
        return bool(self.name)

    @property
    def path(self):
        raise NotImplementedError("This backend doesn't support absolute paths.")

    def open(self, mode="rb"):
        return self._field_file.storage.open(self.name, mode)
