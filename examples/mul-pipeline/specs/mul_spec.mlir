// mul_spec.mlir - transform-dialect preprocessing spec of mul-pipeline.
//
// Given to iree-compile as
//   --iree-preprocessing-transform-spec-filename=specs/mul_spec.mlir
// IREE runs @__transform_main on the whole input module before dispatch
// formation. This spec is deliberately conservative: it canonicalizes every
// function (folding e.g. `x * 1.0`), which never changes a program's meaning,
// so packages layered on top can rely on it being safe to activate. It also
// marks every function it saw with the unit attribute `ireepkg.mul_pipeline`,
// so that its effect can be seen in the compiled IR (--compile-to=preprocessing).

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(
      %module: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func", "util.func"]}
        in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.annotate %funcs "ireepkg.mul_pipeline" : !transform.any_op
    transform.yield
  }
}
