"""The registry: a case (what to time, its issue, goal and floor), the goals
an issue sets, and the checks that keep the registry sound."""
import dataclasses
import re
from typing import Callable, Optional

from _format import fmt_rate


_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_GOAL = re.compile(r"(<=|>=)\s*([0-9]*\.?[0-9]+)\s*(s|ms|us|GB/s|% copy|x CuPy)")


@dataclasses.dataclass(frozen=True)
class Goal:
    """A target from an issue: "<= 0.6 ms", ">= 25 GB/s", ">= 95% copy"
    (a fraction of the device copy rate measured in this run), or
    "<= 1x CuPy" (gpuarr's median over CuPy's, measured in this run)."""
    op: str
    value: float
    unit: str

    @classmethod
    def parse(cls, text):
        m = _GOAL.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"goal {text!r} is not '<= or >=, a number, a unit' "
                             "with unit s, ms, us, GB/s, '% copy' or 'x CuPy'")
        return cls(m[1], float(m[2]), m[3])

    @property
    def is_rate(self):
        return self.unit not in _SECONDS and not self.is_relative

    @property
    def is_relative(self):
        return self.unit == "x CuPy"

    def target(self, copy_rate):
        """Seconds for time goals, bytes per second for rates (None if unknown
        or relative to CuPy)."""
        if self.unit in _SECONDS:
            return self.value * _SECONDS[self.unit]
        if self.unit == "GB/s":
            return self.value * 1e9
        if self.is_relative:
            return None
        return self.value / 100 * copy_rate if copy_rate else None

    def met(self, seconds, moved, copy_rate, ratio=None):
        """Whether the goal is met (None if it cannot be told); ratio is
        gpuarr's median over CuPy's, for goals relative to CuPy."""
        if self.is_relative:
            if ratio is None:
                return None
            return ratio <= self.value if self.op == "<=" else ratio >= self.value
        target = self.target(copy_rate)
        if target is None:
            return None
        measured = moved / seconds if self.is_rate else seconds
        return measured <= target if self.op == "<=" else measured >= target

    def describe(self, copy_rate=None):
        text = f"{self.op} {self.value:g}{'' if self.unit in ('% copy', 'x CuPy') else ' '}" \
            f"{self.unit}"
        if self.unit == "% copy" and copy_rate:
            text += f" ({fmt_rate(self.target(copy_rate))})"
        return text


KINDS = ("gpu", "host", "transfer", "fresh")


@dataclasses.dataclass
class Case:
    name: str
    issue: int
    desc: str
    size: str
    goal: str                         # parsed by Goal
    build: Optional[Callable] = None  # build(xp, *inputs) -> the callable to time
    setup: Callable = tuple           # () -> host inputs; NumPy arrays go to each library
    kind: str = "gpu"
    bytes: float = 0                  # device memory read + written per call
    h2d: float = 0                    # bytes over the bus per call, each way
    d2h: float = 0
    flops: float = 0
    flop_dtype: str = "f64"
    floor_note: str = ""              # the floor in words where it is not computed
    cupy_ref: str = ""                # CuPy's figure in shared/ANCHORS.md
    requires: tuple = ()              # gpuarr names used: "where", "scipy.ndimage.label"
    cpu: bool = False                 # time NumPy/SciPy on the CPU as well
    tol: tuple = (1e-5, 1e-8)         # rtol, atol against NumPy; EXACT: equal
    check: Optional[Callable] = None  # check(got, ref) -> None or what is wrong
    reference: bool = True            # compute NumPy's result for the check
    ref_key: str = ""                 # cases that share one NumPy result
    prep: str = ""                    # fresh: untimed statements after context creation
    steps: tuple = ()                 # fresh: (label, statement) pairs, each timed
    warm_cache: bool = False          # fresh: one untimed child fills the kernel cache first
    calls: int = 0                    # host: calls per sample (0: the config's)
    repeats: int = 1                  # host: units of work per call (the figure is per unit)

    @property
    def moved(self):
        """Bytes moved per call, device and bus: what GB/s figures count."""
        return self.bytes + self.h2d + self.d2h


class Host:
    """A setup value kept on the host, for cases that time their own transfers."""

    def __init__(self, value):
        self.value = value


class Registry(list):
    """Cases in the order they run; case() and fresh_case() add to it."""

    def case(self, name, **fields):
        """Register the decorated build function as a case."""
        def register(build):
            self.append(Case(name=name, build=build, **fields))
            return build
        return register

    def fresh_case(self, name, **fields):
        """Register a case timed in fresh processes: with no steps, the import
        of the library; with steps, context creation and then each step's first
        call, synchronised (the figure is the slowest step)."""
        self.append(Case(name=name, kind="fresh", **fields))

    def check_coverage(self, cases=None):
        """What is wrong with the registry (or with `cases`), as a list of
        strings (empty when sound): names unique, an issue and a goal the
        runner understands per case, bytes for GB/s goals, a body for every
        non-fresh case."""
        problems, seen = [], set()
        for c in self if cases is None else cases:
            if c.name in seen:
                problems.append(f"{c.name}: name used twice")
            seen.add(c.name)
            if not isinstance(c.issue, int) or isinstance(c.issue, bool) or c.issue <= 0:
                problems.append(f"{c.name}: no issue number")
            try:
                goal = Goal.parse(c.goal or "")
            except ValueError as exc:
                problems.append(f"{c.name}: {exc}")
            else:
                if goal.is_rate and not c.moved:
                    problems.append(f"{c.name}: a rate goal needs bytes, h2d or d2h")
            if c.kind not in KINDS:
                problems.append(f"{c.name}: kind {c.kind!r} is not one of {KINDS}")
            if (c.kind == "fresh") != (c.build is None):
                problems.append(f"{c.name}: fresh cases have steps, the others a build function")
            if not c.desc or not c.size:
                problems.append(f"{c.name}: no description or size")
        return problems
