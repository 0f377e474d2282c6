// Tuning spec of the matmul-tuning example for every llvm-cpu target
// (IREE 3.13): the f32 matmul of examples/programs/matmul.mlir (128x256
// times 256x64) gets 32x64 distribution tiles.
#map_lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#map_rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#map_out = affine_map<(d0, d1, d2) -> (d0, d1)>
module @matmul_tuning_cpu attributes {transform.with_named_sequence, iree_codegen.tuning_spec_with_default_entrypoint} {
  transform.named_sequence @apply_op_config(%op: !transform.any_op {transform.readonly}, %config: !transform.any_param {transform.readonly}) {
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.annotate %op "matmul_tuning.cpu" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @match_matmul_128x64x256_f32(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    transform.iree.match.has_no_lowering_config %op : !transform.any_op
    %batch, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [#map_lhs, #map_rhs, #map_out] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %m, [128] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [256] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<
        lowering_config = #iree_cpu.lowering_config<distribution = [32, 64, 0], vector_common_parallel = [8, 4, 0], vector_reduction = [0, 0, 4]>,
        translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
      > -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%root: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %updated = transform.foreach_match in %root
        @match_matmul_128x64x256_f32 -> @apply_op_config : (!transform.any_op) -> !transform.any_op
    transform.yield %updated : !transform.any_op
  }
}
