// @IDENT@Ops.td - the @IDENT@ dialect and its operations, in ODS.
// ireepkg_add_mlir_plugin(... TABLEGEN src/@IDENT@Ops.td DIALECT @IDENT@)
// generates @IDENT@OpsDialect.{h,cpp}.inc and @IDENT@Ops.{h,cpp}.inc.
#ifndef @IDENT_UPPER@_OPS
#define @IDENT_UPPER@_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Plugin_Dialect : Dialect {
  let name = "@IDENT@";
  let summary = "The @IDENT@ dialect of the @NAME@ package";
  let cppNamespace = "::@IDENT@";
}

class Plugin_Op<string mnemonic, list<Trait> traits = []>
    : Op<Plugin_Dialect, mnemonic, traits>;

def Plugin_MarkerOp : Plugin_Op<"marker", [MemoryEffects<[MemWrite]>]> {
  let summary = "Labels a point in the program";
  let description = [{
    Marked as writing memory so that cleanup passes keep it.
  }];
  let arguments = (ins StrAttr:$label);
  let assemblyFormat = "$label attr-dict";
  let hasVerifier = 1;
}

#endif // @IDENT_UPPER@_OPS
