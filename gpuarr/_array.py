"""Small Python-level objects the C core hands out: array flags and memory
pointers.  They sit off the hot path (attribute access, interop)."""


class Flags:
    """Memory-layout flags of a gpuarr.ndarray (read-only snapshot)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata", "writeable")
    _keys = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "OWNDATA": "owndata", "WRITEABLE": "writeable",
             "C": "c_contiguous", "F": "f_contiguous", "O": "owndata", "W": "writeable"}

    def __init__(self, c, f, own, writeable):
        self.c_contiguous = bool(c)
        self.f_contiguous = bool(f)
        self.owndata = bool(own)
        self.writeable = bool(writeable)

    def __getitem__(self, key):
        try:
            return getattr(self, self._keys[key.upper()])
        except (KeyError, AttributeError):
            raise KeyError(key) from None

    def __repr__(self):
        return "\n".join(f"  {k} : {getattr(self, v)}" for k, v in list(self._keys.items())[:4])
