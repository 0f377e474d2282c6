//===- ireepkg/manifest_schema/pipeline.h - MLIR textual pass pipelines ---===//
//
// A syntax checker for MLIR's textual pass pipelines, as written in the
// `pipeline` of a manifest hook. MLIR's own parser resolves every name
// against the registered passes, and IREE's passes are not registered in a
// plain MLIR, so ireepkg checks the syntax itself:
//
//   pipeline          ::= op-anchor `(` pipeline-element (`,` pipeline-element)* `)`
//   pipeline-element  ::= pipeline | (pass-name | pass-pipeline-name) options?
//   options           ::= `{` (key (`=` value)?)* `}`
//
// A text is a comma-separated list of elements, so both an anchored pipeline
// ("builtin.module(func.func(cse))") and a bare fragment ("canonicalize,cse",
// "func.func(cse),canonicalize") are accepted. Names (pass, pipeline and
// operation names, and option keys) are [A-Za-z_][A-Za-z0-9_.-]*. Whitespace
// may surround any name and punctuation; inside `{...}` options are separated
// by spaces, as MLIR requires. A value runs to the next space and may contain
// '...' or "..." quoted text, balanced {...} (nested options, as in
// `{a={b=1}}`) and commas (lists, as in `{list=1,2,3}`). As in MLIR, the
// `}` that closes a pass's options is found by counting braces without regard
// to quotes.
//
// A nested pipeline needs at least one element, except a whole text that is
// a single empty anchor ("builtin.module()"), which is MLIR's empty pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PIPELINE_H
#define IREEPKG_PIPELINE_H

#include <cstddef>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// One `key` or `key=value` inside a pass's `{...}`.
struct PassOption {
  std::string key;
  /// The value as written: quotes, braces and commas kept. Empty for a bare
  /// `key` and for `key=`.
  std::string value;
  bool hasValue = false; ///< written as `key=...`
  size_t column = 0;     ///< 1-based column of the key in the pipeline text

  /// The value as MLIR hands it to the option's parser: trimmed, with one
  /// enclosing pair of quotes, or one enclosing `{...}`, removed.
  std::string literal() const;
};

/// A pass (or registered pass pipeline) with options, or a nested pipeline
/// `op-name(...)`.
struct PipelineElement {
  enum class Kind { Pass, Nested };
  Kind kind = Kind::Pass;
  std::string name;  ///< pass name, or the operation name of a nesting
  size_t column = 0; ///< 1-based column of the name

  // Kind::Pass
  bool hasOptions = false;          ///< written with `{...}`, maybe empty
  std::string optionsText;          ///< the raw text between the braces
  std::vector<PassOption> options;  ///< parsed from optionsText, in order

  // Kind::Nested
  std::vector<PipelineElement> elements;

  bool isPass() const { return kind == Kind::Pass; }
  bool isNested() const { return kind == Kind::Nested; }
  /// Canonical text: no whitespace between elements, options verbatim.
  std::string str() const;
};

/// A parsed pipeline text: its top-level, comma-separated elements.
struct PassPipeline {
  std::vector<PipelineElement> elements;

  /// True when the whole text is one `op-name(...)`.
  bool isAnchored() const {
    return elements.size() == 1 && elements.front().isNested();
  }
  /// The anchor's operation name ("builtin.module", "func.func", ...), or ""
  /// for a fragment that is not one `op-name(...)`.
  std::string anchor() const {
    return isAnchored() ? elements.front().name : std::string();
  }
  /// Canonical text, e.g. "builtin.module(func.func(cse),canonicalize{a=1})".
  std::string str() const;
};

/// A syntax error in a pipeline text.
///
/// Not an ireepkg::Error, on purpose: it is a parse diagnostic about a
/// string on its own (a column within the pipeline text; no file, line,
/// JSON pointer, code or hint, which the parser cannot know). It becomes an
/// error in one place, the manifest check (checkPipelineSyntax in
/// manifest_schema/src/manifest.cpp), which reports str() at the JSON
/// pointer of the hook's "pipeline" with the hint; the MLIR check client
/// only skips pipelines that do not parse.
struct PipelineError {
  size_t column = 0; ///< 1-based byte column in the text; length+1 at the end
  /// What is wrong, without the column, e.g. `expected ')' to close
  /// "func.func(" opened at column 10`.
  std::string message;

  /// `message (at column N)`.
  std::string str() const;
};

/// Parses a pipeline or a fragment (see the file comment).
std::expected<PassPipeline, PipelineError>
parsePassPipeline(std::string_view text);

/// Every pass (and pass pipeline) name used, at any depth, each once, in the
/// order of first use. Operation names of nestings are not included.
std::vector<std::string> pipelinePassNames(const PassPipeline &pipeline);

/// Composes fragments, in order, into one `builtin.module(...)` pipeline. A
/// fragment that is a single `builtin.module(...)` contributes its elements;
/// any other fragment contributes its top-level elements as they are (so
/// `func.func(...)` stays a nested pipeline). No fragments give
/// "builtin.module()".
std::string composePassPipelines(std::span<const PassPipeline> fragments);

/// A syntax error in one of the texts given to composePassPipelines.
struct PipelineFragmentError {
  size_t index = 0; ///< 0-based index of the fragment
  PipelineError error;
};

/// Parses each text and composes them as above; fails on the first text
/// that is not a valid pipeline.
std::expected<std::string, PipelineFragmentError>
composePassPipelines(std::span<const std::string> fragments);

} // namespace ireepkg

#endif // IREEPKG_PIPELINE_H
