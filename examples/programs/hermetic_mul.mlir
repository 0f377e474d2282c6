// hermetic_mul.mlir - an IREE program whose dispatch is linked from an object
// file at compile time (hermetic custom dispatch).
//
// @hermetic_mul(a, b) returns a * b and @hermetic_mul_add(a, b) returns
// a * b + a (f32, any length). The multiply is `hermetic_mul_workgroup`, a C
// function that the hermetic-mul package ships as one object file per
// architecture (examples/hermetic-mul/src/hermetic_mul.c). Unlike
// simple_mul.mlir, nothing is resolved at run time: iree-compile links the
// object into the executable, so the .vmfb needs no plugin.
//
// The object is named by file name only; iree-compile looks it up in the
// directories given with --iree-hal-executable-object-search-path, which is
// what the package's `executable-objects` hook contributes (the directory of
// the target architecture):
//
//   iree-compile hermetic_mul.mlir --iree-hal-target-device=local \
//       --iree-hal-local-target-device-backends=llvm-cpu \
//       --iree-llvmcpu-target-cpu=host \
//       --iree-hal-executable-object-search-path=<hermetic-mul>/objects/x86_64 \
//       -o hermetic_mul.vmfb
//   iree-run-module --device=local-sync --module=hermetic_mul.vmfb \
//       --function=hermetic_mul --input=8xf32=2 --input=8xf32=4
//   => 8xf32=8 8 8 8 8 8 8 8
//
// Without the search path the compile fails with "referenced object file not
// found on any path".

// Object lists are keyed by executable target. These keys are generic (no
// CPU or feature configuration), so they apply to every variant of that
// format, including the host-specific one --iree-llvmcpu-target-cpu=host
// produces.
#x86_64_target = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#arm_64_target = #hal.executable.target<"llvm-cpu", "embedded-elf-arm_64">

module @hermetic_mul_example {

  stream.executable private @hermetic_mul_executable attributes {
    hal.executable.objects = #hal.executable.objects<{
      #x86_64_target = [#hal.executable.object<{path = "hermetic_mul.o"}>],
      #arm_64_target = [#hal.executable.object<{path = "hermetic_mul.o"}>]
    }>
  } {
    // One workgroup per tile of 64 elements (the kernel's tile size).
    stream.executable.export public @hermetic_mul_dispatch
        workgroups(%n: index) -> (index, index, index) {
      %tiles = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%n]
      %one = arith.constant 1 : index
      stream.return %tiles, %one, %one : index, index, index
    }

    builtin.module {
      // Defined by hermetic_mul.o. hal.import.static: link it statically into
      // the executable instead of importing it from a runtime plugin.
      // llvm.bareptr: each memref<f32> is passed as a single pointer; the
      // offsets that follow are in elements and `index` is size_t.
      func.func private @hermetic_mul_workgroup(
          %lhs: memref<f32>, %lhs_offset: index,
          %rhs: memref<f32>, %rhs_offset: index,
          %out: memref<f32>, %out_offset: index,
          %size: index, %tile: index)
          attributes {hal.import.static, llvm.bareptr = true}

      func.func @hermetic_mul_dispatch(%lhs_binding: !stream.binding,
                                       %rhs_binding: !stream.binding,
                                       %out_binding: !stream.binding,
                                       %size: index) {
        %c0 = arith.constant 0 : index
        %tile = stream.dispatch.workgroup.id[0] : index

        %lhs_view = stream.binding.subspan %lhs_binding[%c0]
            : !stream.binding -> memref<?xf32>{%size}
        %rhs_view = stream.binding.subspan %rhs_binding[%c0]
            : !stream.binding -> memref<?xf32>{%size}
        %out_view = stream.binding.subspan %out_binding[%c0]
            : !stream.binding -> memref<?xf32>{%size}

        %lhs, %lhs_offset, %lhs_size, %lhs_stride =
            memref.extract_strided_metadata %lhs_view
            : memref<?xf32> -> memref<f32>, index, index, index
        %rhs, %rhs_offset, %rhs_size, %rhs_stride =
            memref.extract_strided_metadata %rhs_view
            : memref<?xf32> -> memref<f32>, index, index, index
        %out, %out_offset, %out_size, %out_stride =
            memref.extract_strided_metadata %out_view
            : memref<?xf32> -> memref<f32>, index, index, index

        func.call @hermetic_mul_workgroup(%lhs, %lhs_offset, %rhs, %rhs_offset,
                                          %out, %out_offset, %size, %tile)
            : (memref<f32>, index, memref<f32>, index, memref<f32>, index,
               index, index) -> ()
        return
      }
    }
  }

  // result = lhs * rhs, computed by the linked object.
  func.func @hermetic_mul(%lhs: tensor<?xf32>, %rhs: tensor<?xf32>)
      -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %size = tensor.dim %lhs, %c0 : tensor<?xf32>
    %product = flow.dispatch @hermetic_mul_executable::@hermetic_mul_dispatch[%size](
        %lhs, %rhs, %size)
        : (tensor<?xf32>{%size}, tensor<?xf32>{%size}, index)
        -> tensor<?xf32>{%size}
    return %product : tensor<?xf32>
  }

  // result = lhs * rhs + lhs: the hand-written dispatch followed by ordinary
  // code generation.
  func.func @hermetic_mul_add(%lhs: tensor<?xf32>, %rhs: tensor<?xf32>)
      -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %size = tensor.dim %lhs, %c0 : tensor<?xf32>
    %product = flow.dispatch @hermetic_mul_executable::@hermetic_mul_dispatch[%size](
        %lhs, %rhs, %size)
        : (tensor<?xf32>{%size}, tensor<?xf32>{%size}, index)
        -> tensor<?xf32>{%size}
    %sum = arith.addf %product, %lhs : tensor<?xf32>
    return %sum : tensor<?xf32>
  }
}
