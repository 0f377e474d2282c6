// standalone_mul.mlir - a test program of iree-port: @standalone_mul(a, b) returns a * b
// (f32, any length) through the import standalone_mul_workgroup, which the runtime
// resolves from src/standalone_plugin.c. `ireepkg test` compiles it with iree-compile
// and runs it with iree-run-module (ireeplugin.json, "tests").

module @standalone_mul_example {

  stream.executable private @standalone_mul_executable {
    // One workgroup per tile of 64 elements (the plugin's tile size).
    stream.executable.export public @standalone_mul_dispatch
        workgroups(%n: index) -> (index, index, index) {
      %tiles = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>()[%n]
      %one = arith.constant 1 : index
      stream.return %tiles, %one, %one : index, index, index
    }

    builtin.module {
      // Resolved at run time from a plugin. With llvm.bareptr each memref<f32>
      // is passed as one pointer; the offsets are in elements.
      func.func private @standalone_mul_workgroup(
          %a: memref<f32>, %a_offset: index,
          %b: memref<f32>, %b_offset: index,
          %out: memref<f32>, %out_offset: index,
          %dim: index, %tile: index) attributes {llvm.bareptr = true}

      func.func @standalone_mul_dispatch(%lhs: !stream.binding,
                                     %rhs: !stream.binding,
                                     %result: !stream.binding,
                                     %dim: index) {
        %c0 = arith.constant 0 : index
        %tile = stream.dispatch.workgroup.id[0] : index

        %lhs_view = stream.binding.subspan %lhs[%c0]
            : !stream.binding -> memref<?xf32>{%dim}
        %rhs_view = stream.binding.subspan %rhs[%c0]
            : !stream.binding -> memref<?xf32>{%dim}
        %result_view = stream.binding.subspan %result[%c0]
            : !stream.binding -> memref<?xf32>{%dim}

        %a, %a_offset, %a_size, %a_stride =
            memref.extract_strided_metadata %lhs_view
            : memref<?xf32> -> memref<f32>, index, index, index
        %b, %b_offset, %b_size, %b_stride =
            memref.extract_strided_metadata %rhs_view
            : memref<?xf32> -> memref<f32>, index, index, index
        %out, %out_offset, %out_size, %out_stride =
            memref.extract_strided_metadata %result_view
            : memref<?xf32> -> memref<f32>, index, index, index

        func.call @standalone_mul_workgroup(%a, %a_offset, %b, %b_offset,
                                        %out, %out_offset, %dim, %tile)
            : (memref<f32>, index, memref<f32>, index, memref<f32>, index,
               index, index) -> ()
        return
      }
    }
  }

  // Host function: result = a * b through the plugin's import.
  func.func @standalone_mul(%a: tensor<?xf32>, %b: tensor<?xf32>)
      -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %a, %c0 : tensor<?xf32>
    %product = flow.dispatch @standalone_mul_executable::@standalone_mul_dispatch[%dim](
        %a, %b, %dim)
        : (tensor<?xf32>{%dim}, tensor<?xf32>{%dim}, index)
        -> tensor<?xf32>{%dim}
    return %product : tensor<?xf32>
  }
}
