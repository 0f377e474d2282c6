//===- hermetic_mul.c - A kernel linked into IREE executables -------------===//
//
// The hermetic-mul package's only code: an element-wise multiply that IREE's
// compiler links *into* the executables it generates (hermetic custom
// dispatch), instead of resolving it from a runtime plugin at load time.
//
// The build compiles this file once per architecture into a relocatable
// object (objects/<arch>/hermetic_mul.o). A program names the object with
// #hal.executable.object<{path = "hermetic_mul.o"}> and iree-compile finds it
// through --iree-hal-executable-object-search-path=<package>/objects/<arch>
// (the package's `executable-objects` hook). See
// examples/programs/hermetic_mul.mlir for the MLIR side.
//
// The object ends up inside an embedded ELF, so the usual freestanding rules
// apply: no libc, no TLS, no globals with relocations IREE's linker cannot
// resolve, no syscalls. Only freestanding headers are included.
//
//===----------------------------------------------------------------------===//

#include <stddef.h>

/// Elements per workgroup; the program's workgroup count function must agree
/// (it dispatches ceil(n / 64) workgroups).
#define HERMETIC_MUL_TILE 64

/// out[i] = lhs[i] * rhs[i] for the elements of workgroup `tile`.
///
/// The calling convention is the one MLIR's func.call lowers to for the
/// declaration in hermetic_mul.mlir: with `llvm.bareptr = true` each
/// memref<f32> is a single pointer, followed by the element offset that
/// memref.extract_strided_metadata produced for it; `index` is size_t.
void hermetic_mul_workgroup(const float *restrict lhs, size_t lhs_offset,
                            const float *restrict rhs, size_t rhs_offset,
                            float *restrict out, size_t out_offset, size_t size,
                            size_t tile) {
  size_t begin = tile * HERMETIC_MUL_TILE;
  size_t end = begin + HERMETIC_MUL_TILE;
  if (end > size)
    end = size;
  lhs += lhs_offset;
  rhs += rhs_offset;
  out += out_offset;
  for (size_t i = begin; i < end; ++i)
    out[i] = lhs[i] * rhs[i];
}
