// Tuning spec of the matmul-tuning example for ROCm gfx942 (IREE 3.13):
// the f32 matmul of examples/programs/matmul.mlir (128x256 times 256x64)
// gets a lowering configuration of its own, with 32x64 workgroup tiles.
#map_lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#map_rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#map_out = affine_map<(d0, d1, d2) -> (d0, d1)>
module @matmul_tuning_gfx942 attributes {transform.with_named_sequence, iree_codegen.tuning_spec_with_default_entrypoint} {
  transform.named_sequence @apply_op_config(%op: !transform.any_op {transform.readonly}, %config: !transform.any_param {transform.readonly}) {
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.annotate %op "matmul_tuning.gfx942" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @match_matmul_128x64x256_f32(%op: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    transform.iree.match.has_no_lowering_config %op : !transform.any_op
    %batch, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [#map_lhs, #map_rhs, #map_out] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %m, [128] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [64] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [256] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<
        lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<MFMA_F32_16x16x4_F32>, promote_operands = [0, 1], reduction = [0, 0, 16], subgroup = [1, 2, 0], workgroup = [32, 64, 0]}>,
        translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 64, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2>}>
      > -> !transform.any_param
    transform.yield %op, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%root: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %updated = transform.foreach_match in %root
        @match_matmul_128x64x256_f32 -> @apply_op_config : (!transform.any_op) -> !transform.any_op
    transform.yield %updated : !transform.any_op
  }
}
