//===- compiler_integration/src/compiler_state.cpp ------------------------===//
// compiler.json and compiler.flags.
#include "ireepkg/compiler_integration/compiler_state.h"

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/compiler_index.h"

namespace ireepkg {

namespace {

using ojson = nlohmann::ordered_json;

class CompilerStateWriter final : public StateWriter {
public:
  Status write(const StateContext &context,
               std::map<std::string, std::string> &files, ojson &activation,
               std::vector<Diagnostic> &warnings) const override {
    // The same configuration `ireepkg flags compiler` builds, without a
    // known compiler, so iree-dynamic plugins are left to exec and flags.
    std::vector<ActivatedPackage> activated;
    for (const ActivePackage &a : context.active)
      activated.push_back(
          {a.package->name, a.package->version, a.dir, a.manifest});
    CompilerConfigRequest request;
    request.platform = context.platform;
    request.deferDynamic = true;
    request.projectValues = context.project.values;
    request.choose = context.project.choose;
    // compiler.json: the compiler side of every active manifest, already
    // checked (pipelines included), so `flags compiler` and `exec` read one
    // small file instead of re-reading and re-checking every manifest.
    files[kCompilerIndexFile] = encodeCompilerIndex(
        activated, context.platform.str(), context.project);

    // compiler.flags is an LLVM response file (iree-compile @file): IREE's
    // compiler reads no --flagfile, and response files have no comments, so
    // what was left out and why goes to activation.json instead.
    auto config = buildCompilerConfig(activated, request);
    std::string flags;
    ojson notes = ojson::array();
    if (config) {
      for (const CompilerFlag &f : config->flags)
        flags += responseFileQuote(f.text()) + "\n";
      for (const Diagnostic &d : config->notes)
        notes.push_back({{"severity", "note"}, {"message", d.format()}});
    } else {
      // The prefix stays usable for the runtime; `flags compiler` and
      // `exec` report the errors before any compiler runs.
      for (const Diagnostic &d : config.error().diagnostics) {
        notes.push_back({{"severity", "error"}, {"message", d.format()}});
        Diagnostic w = d;
        w.severity = Severity::Warning;
        warnings.push_back(w);
      }
    }
    files[kCompilerFlagsFile] = std::move(flags);
    activation["compiler"]["notes"] = notes;
    return ok();
  }
};

} // namespace

const StateWriter &compilerStateWriter() {
  static const CompilerStateWriter writer;
  return writer;
}

} // namespace ireepkg
