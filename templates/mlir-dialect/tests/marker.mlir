// The test program of @NAME@: `ireepkg test` runs mlir-opt with
// --load-dialect-plugin=<lib@IDENT@.so> and canonicalize on it, and expects
// the marker back (ireeplugin.json, "tests").
func.func @marked() {
  @IDENT@.marker "hello"
  return
}
