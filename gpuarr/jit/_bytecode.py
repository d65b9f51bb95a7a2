"""The bytecode front end: one normalised instruction set for the bytecode of
Python 3.10 to 3.13, and the basic blocks over it.

The translator reads a function's bytecode (``dis.get_instructions``), not
its source, so functions typed into the REPL, a Jupyter cell or ``python
-c`` translate too.  Everything that differs between CPython versions is
settled here, in ``normalise``, and nowhere else:

- operators: BINARY_ADD/INPLACE_ADD... (3.10) and BINARY_OP (3.11+) both
  become ``BINOP`` with the operator's symbol;
- calls: CALL_FUNCTION/CALL_METHOD/CALL_FUNCTION_KW (3.10), PRECALL + CALL
  with KW_NAMES (3.11), CALL with KW_NAMES (3.12), CALL/CALL_KW (3.13)
  become ``CALL(argc, kwnames, names_on_stack, slots)``, where ``slots``
  counts what sits under the arguments (1 for 3.10's CALL_FUNCTION, else 2:
  a callable and a NULL or self, in whichever order the version uses);
- LOAD_GLOBAL's NULL bit (3.11+), LOAD_ATTR's method bit (3.12+) and
  LOAD_METHOD (3.10/3.11) become LOAD_GLOBAL + PUSH_NULL and LOAD_METHOD;
- jumps: relative/absolute, forward/backward, POP_JUMP_IF_* and
  JUMP_IF_*_OR_POP become ``JUMP(target)`` and ``BRANCH(kind, target,
  pop_on_jump)``; ``dis`` already resolves every target to an offset;
- FOR_ITER's exit: the iterator is popped when the loop ends (3.10/3.11 do
  it in FOR_ITER; 3.12 jumps to END_FOR, 3.13 to END_FOR + POP_TOP), so the
  exit target is moved past those;
- stack shuffles: ROT_*/DUP_TOP* (3.10) and COPY/SWAP (3.11+) become
  ``COPY(n)``, ``SWAP(n)`` and ``ROT(n)``;
- superinstructions of 3.13 (LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST,
  STORE_FAST_LOAD_FAST) are split; TO_BOOL (3.13) becomes ``TO_BOOL``;
  RETURN_CONST (3.12+) becomes LOAD_CONST + RETURN;
- line numbers: ``positions.lineno`` (3.11+) or ``starts_line`` carried
  forward (3.10).

Constructs that have no kernel meaning become ``UNSUPPORTED(what)``, named
as the user wrote them ("list comprehension", "try statement", ...), so the
error can say so at the right line.
"""
import dis
import sys
from collections import namedtuple

__all__ = ["Ins", "normalise", "blocks", "Block"]

PY = sys.version_info[:2]

# op: normalised name; arg: its argument; offset: the original instruction's
# offset (jump targets refer to these); line: the source line; target: the
# offset a JUMP/BRANCH/FOR_ITER goes to.
Ins = namedtuple("Ins", "op arg offset line target")

_BINARY_310 = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//", "MODULO": "%", "POWER": "**", "LSHIFT": "<<",
    "RSHIFT": ">>", "AND": "&", "OR": "|", "XOR": "^", "MATRIX_MULTIPLY": "@",
}

# opname -> the construct it comes from, in the user's terms.
_CONSTRUCTS = {
    "BUILD_LIST": "list", "LIST_APPEND": "list comprehension", "LIST_EXTEND": "list",
    "BUILD_SET": "set", "SET_ADD": "set comprehension", "SET_UPDATE": "set",
    "BUILD_MAP": "dict", "BUILD_CONST_KEY_MAP": "dict", "MAP_ADD": "dict comprehension",
    "DICT_UPDATE": "dict", "DICT_MERGE": "dict",
    "SETUP_FINALLY": "try statement", "PUSH_EXC_INFO": "try statement",
    "POP_EXCEPT": "try statement", "CHECK_EXC_MATCH": "try statement",
    "SETUP_WITH": "with statement", "BEFORE_WITH": "with statement",
    "SETUP_ASYNC_WITH": "async with statement", "BEFORE_ASYNC_WITH": "async with statement",
    "RAISE_VARARGS": "raise statement", "RERAISE": "raise statement",
    "LOAD_ASSERTION_ERROR": "assert statement",
    "YIELD_VALUE": "yield (generator)", "RETURN_GENERATOR": "yield (generator)",
    "GEN_START": "yield (generator)", "GET_AWAITABLE": "await", "SEND": "yield from",
    "IMPORT_NAME": "import statement", "IMPORT_FROM": "import statement",
    "IMPORT_STAR": "import statement",
    "STORE_GLOBAL": "assignment to a global", "DELETE_GLOBAL": "del of a global",
    "STORE_DEREF": "assignment to a nonlocal", "DELETE_DEREF": "del",
    "STORE_NAME": "assignment at module level", "LOAD_NAME": "module-level code",
    "STORE_ATTR": "attribute assignment", "DELETE_ATTR": "del",
    "DELETE_FAST": "del", "DELETE_SUBSCR": "del",
    "BUILD_SLICE": "slicing", "BINARY_SLICE": "slicing", "STORE_SLICE": "slicing",
    "FORMAT_VALUE": "f-string", "FORMAT_SIMPLE": "f-string",
    "FORMAT_WITH_SPEC": "f-string", "CONVERT_VALUE": "f-string", "BUILD_STRING": "f-string",
    "CONTAINS_OP": "'in' operator", "CALL_FUNCTION_EX": "call with *args or **kwargs",
    "LOAD_BUILD_CLASS": "class definition", "MATCH_CLASS": "match statement",
    "MATCH_MAPPING": "match statement", "MATCH_SEQUENCE": "match statement",
    "MATCH_KEYS": "match statement", "GET_LEN": "match statement",
    "LIST_TO_TUPLE": "list", "UNPACK_EX": "starred assignment",
    "LOAD_FAST_AND_CLEAR": "comprehension", "GET_AITER": "async for",
    "GET_ANEXT": "async for", "END_ASYNC_FOR": "async for", "COPY_DICT_WITHOUT_KEYS": "match statement",
    "LOAD_CLASSDEREF": "class body", "LOAD_FROM_DICT_OR_DEREF": "class body",
    "LOAD_FROM_DICT_OR_GLOBALS": "class body", "LOAD_SUPER_ATTR": "super()",
    "SETUP_ANNOTATIONS": "annotations", "PRINT_EXPR": "interactive expression",
}

_NESTED_CODE = {"<listcomp>": "list comprehension", "<setcomp>": "set comprehension",
                "<dictcomp>": "dict comprehension", "<genexpr>": "generator expression",
                "<lambda>": "lambda"}

# Constructs refused before translation starts (see _translate).
STRUCTURAL = {"try statement", "with statement", "async with statement", "list comprehension",
              "set comprehension", "dict comprehension", "generator expression",
              "yield (generator)"}

# 3.12+ inline comprehensions: their first instructions name the comprehension.
_COMPREHENSION_OPS = {"LIST_APPEND": "list comprehension", "SET_ADD": "set comprehension",
                      "MAP_ADD": "dict comprehension"}

# Instructions with no effect on the abstract machine.
_IGNORED = {"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "MAKE_CELL",
            "COPY_FREE_VARS", "NOT_TAKEN", "RESUME_CHECK", "INTERPRETER_EXIT"}


def _lines(code):
    """The source line of each instruction, carried forward where the
    version leaves it out."""
    line = code.co_firstlineno
    for ins in dis.get_instructions(code):
        pos = getattr(ins, "positions", None)
        if pos is not None and pos.lineno is not None:
            line = pos.lineno
        elif PY < (3, 11) and ins.starts_line is not None:
            line = ins.starts_line
        yield ins, line


def _kw_names(ins, code):
    return ins.argval if isinstance(ins.argval, tuple) else code.co_consts[ins.arg]


def normalise(code):
    """The instructions of ``code`` as a list of Ins in the normalised set."""
    out = []
    raw = list(_lines(code))
    by_offset = {ins.offset: k for k, (ins, _) in enumerate(raw)}
    kwnames = ()
    comprehension = next((_COMPREHENSION_OPS[i.opname] for i, _ in raw
                          if i.opname in _COMPREHENSION_OPS), None)

    def emit(op, arg=None, target=None):
        out.append(Ins(op, arg, ins.offset, line, target))

    for ins, line in raw:
        name, arg = ins.opname, ins.argval
        if name in _IGNORED:
            emit("NOP")
        elif name in ("LOAD_CONST", "LOAD_SMALL_INT"):
            emit("LOAD_CONST", arg)
        elif name == "RETURN_CONST":
            emit("LOAD_CONST", arg)
            emit("RETURN")
        elif name == "RETURN_VALUE":
            emit("RETURN")
        elif name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"):
            emit("LOAD_FAST", arg)
        elif name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            emit("LOAD_FAST", arg[0])
            emit("LOAD_FAST", arg[1])
        elif name == "STORE_FAST":
            emit("STORE_FAST", arg)
        elif name == "STORE_FAST_STORE_FAST":
            emit("STORE_FAST", arg[0])
            emit("STORE_FAST", arg[1])
        elif name == "STORE_FAST_LOAD_FAST":
            emit("STORE_FAST", arg[0])
            emit("LOAD_FAST", arg[1])
        elif name == "LOAD_GLOBAL":
            if PY >= (3, 11) and ins.arg & 1:
                emit("PUSH_NULL")
            emit("LOAD_GLOBAL", arg)
        elif name in ("LOAD_DEREF", "LOAD_CLOSURE"):
            emit("LOAD_DEREF", arg)
        elif name == "LOAD_ATTR":
            if PY >= (3, 12) and ins.arg & 1:
                emit("LOAD_METHOD", arg)
            else:
                emit("LOAD_ATTR", arg)
        elif name == "LOAD_METHOD":
            emit("LOAD_METHOD", arg)
        elif name == "PUSH_NULL":
            emit("PUSH_NULL")
        elif name == "POP_TOP":
            emit("POP_TOP")
        elif name == "COPY":
            emit("COPY", ins.arg)
        elif name == "SWAP":
            emit("SWAP", ins.arg)
        elif name == "DUP_TOP":
            emit("COPY", 1)
        elif name == "DUP_TOP_TWO":
            emit("COPY", 2)
            emit("COPY", 2)
        elif name == "ROT_TWO":
            emit("SWAP", 2)
        elif name in ("ROT_THREE", "ROT_FOUR", "ROT_N"):
            emit("ROT", {"ROT_THREE": 3, "ROT_FOUR": 4}.get(name, ins.arg))
        elif name == "BINARY_OP":
            emit("BINOP", ins.argrepr.rstrip("=") if ins.argrepr not in ("==",) else "==")
        elif name.startswith(("BINARY_", "INPLACE_")) and name.split("_", 1)[1] in _BINARY_310:
            emit("BINOP", _BINARY_310[name.split("_", 1)[1]])
        elif name == "BINARY_SUBSCR":
            emit("SUBSCR")
        elif name == "STORE_SUBSCR":
            emit("STORE_SUBSCR")
        elif name in ("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT"):
            emit("UNARY", {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+",
                           "UNARY_INVERT": "~", "UNARY_NOT": "not"}[name])
        elif name == "CALL_INTRINSIC_1" and ins.argrepr == "INTRINSIC_UNARY_POSITIVE":
            emit("UNARY", "+")
        elif name == "TO_BOOL":
            emit("TO_BOOL")
        elif name == "COMPARE_OP":
            emit("COMPARE", arg)
        elif name == "IS_OP":
            emit("IS", bool(ins.arg))
        elif name == "BUILD_TUPLE":
            emit("BUILD_TUPLE", ins.arg)
        elif name == "UNPACK_SEQUENCE":
            emit("UNPACK", ins.arg)
        elif name == "KW_NAMES":
            kwnames = _kw_names(ins, code)
            emit("NOP")
        elif name in ("CALL", "CALL_METHOD"):
            emit("CALL", (ins.arg, kwnames, False, 2))
            kwnames = ()
        elif name == "CALL_KW":
            emit("CALL", (ins.arg, None, True, 2))
        elif name == "CALL_FUNCTION":
            emit("CALL", (ins.arg, (), False, 1))
        elif name == "CALL_FUNCTION_KW":
            emit("CALL", (ins.arg, None, True, 1))
        elif name == "GET_ITER":
            emit("GET_ITER")
        elif name == "FOR_ITER":
            target = arg
            if PY >= (3, 12):
                # jump past END_FOR (and 3.13's POP_TOP of the iterator)
                k = by_offset[target]
                assert raw[k][0].opname == "END_FOR"
                k += 1
                if PY >= (3, 13) and k < len(raw) and raw[k][0].opname == "POP_TOP":
                    k += 1
                target = raw[k][0].offset if k < len(raw) else None
            emit("FOR_ITER", None, target)
        elif name == "END_FOR":
            emit("END_FOR")
        elif name in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                      "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_NO_INTERRUPT"):
            emit("JUMP", None, arg)
        elif name.startswith("POP_JUMP_"):
            kind = name.rsplit("_IF_", 1)[1].lower()       # false, true, none, not_none
            emit("BRANCH", (kind, True), arg)
        elif name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
            emit("BRANCH", ("false" if "FALSE" in name else "true", False), arg)
        elif name == "MAKE_FUNCTION":
            what = "nested function"
            prev = out[-1] if out else None
            if prev is not None and prev.op == "LOAD_CONST" and hasattr(prev.arg, "co_name"):
                what = _NESTED_CODE.get(prev.arg.co_name, what)
            elif PY < (3, 11) and len(out) > 1 and hasattr(out[-2].arg, "co_name"):
                what = _NESTED_CODE.get(out[-2].arg.co_name, what)
            emit("UNSUPPORTED", what)
        elif comprehension and name in ("LOAD_FAST_AND_CLEAR", "BUILD_LIST", "BUILD_SET",
                                        "BUILD_MAP"):
            emit("UNSUPPORTED", comprehension)
        else:
            emit("UNSUPPORTED", _CONSTRUCTS.get(name, f"the bytecode {name}"))
    return out


class Block:
    """A basic block: ``ins`` (its instructions), ``index``, ``succ`` (the
    indexes of the blocks control can go to), ``pred``."""

    __slots__ = ("index", "ins", "succ", "pred", "start")

    def __init__(self, index, ins):
        self.index = index
        self.ins = ins
        self.start = ins[0].offset
        self.succ = []
        self.pred = []

    @property
    def line(self):
        return self.ins[0].line


_ENDS = ("JUMP", "RETURN", "UNSUPPORTED")


def blocks(ins):
    """Split normalised instructions into basic blocks (in offset order) and
    link them.  Returns (blocks, block_of_offset)."""
    leaders = {0}
    for k, i in enumerate(ins):
        if i.target is not None:
            leaders.add(i.target)
        if i.op in ("JUMP", "BRANCH", "FOR_ITER", "RETURN") and k + 1 < len(ins):
            leaders.add(ins[k + 1].offset)
    result, cur = [], []
    for k, i in enumerate(ins):
        first_of_offset = k == 0 or ins[k - 1].offset != i.offset
        if cur and first_of_offset and i.offset in leaders:
            result.append(Block(len(result), cur))
            cur = []
        cur.append(i)
    if cur:
        result.append(Block(len(result), cur))
    at = {b.start: b.index for b in result}
    for b in result:
        last = b.ins[-1]
        if last.target is not None:
            b.succ.append(at[last.target])
        falls = last.op not in _ENDS
        if falls and b.index + 1 < len(result):
            b.succ.insert(0, b.index + 1)
    for b in result:
        for s in b.succ:
            result[s].pred.append(b.index)
    return result, at
