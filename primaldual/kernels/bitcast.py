"""Bit reinterpretation between integers and floats of one width, for compiled code: the
vectorisable ``exp`` of :mod:`._fastexp` (float64) and the block SMO's float32 ``exp`` build
their powers of two from the exponent bits.

Each is one LLVM ``bitcast`` (no memory round trip), so a loop that uses it still vectorises.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["bits_to_float", "float_to_bits"]

#: the integer type of each float width, and the LLVM float type of each integer width
_WIDTH = {types.int64: (types.float64, ir.DoubleType()), types.int32: (types.float32,
                                                                        ir.FloatType())}
_BITS = {types.float64: (types.int64, ir.IntType(64)), types.float32: (types.int32,
                                                                       ir.IntType(32))}


def _bitcast(types_of: dict, doc: str):
    """An intrinsic reinterpreting its argument's bits as ``types_of[type]`` (``None``, so
    numba looks further, for any other type)."""
    @intrinsic
    def cast(typingctx, x):
        if x not in types_of:
            return None
        ret, llty = types_of[x]

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], llty)

        return ret(x), codegen

    cast.__doc__ = doc
    return cast


bits_to_float = _bitcast(_WIDTH, "The bits of an ``int64`` (``int32``) read as a ``float64`` "
                                 "(``float32``).")
float_to_bits = _bitcast(_BITS, "The bits of a ``float64`` (``float32``) read as an ``int64`` "
                                "(``int32``).")
