//===- ireepkg/manifest_schema/semver.h -----------------------------------===//
//
// Semantic versions and constraints.
//
// Semantic Versioning 2.0.0 for ireepkg:
//
//  * Version: a strictly parsed SemVer version with spec precedence.
//  * VersionSet: a set of versions kept as a sorted union of disjoint
//    intervals in precedence order. It is closed under intersection, union,
//    complement and difference, which is what a PubGrub-style resolver needs.
//  * Constraint: the user-facing constraint syntax ("^1.2", ">=1.0.0, <2.0.0
//    || 3.*") compiled to a VersionSet, plus the npm-style pre-release rule.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_SEMVER_H
#define IREEPKG_SEMVER_H

#include "ireepkg/base/error.h"

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// A Semantic Versioning 2.0.0 version: MAJOR.MINOR.PATCH[-PRE][+BUILD].
struct Version {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  /// Dot-separated pre-release identifiers ("rc", "1" for 1.0.0-rc.1).
  std::vector<std::string> prerelease;
  /// Dot-separated build metadata identifiers; ignored by precedence.
  std::vector<std::string> build;

  /// Parses a version strictly by SemVer 2.0.0: no leading "v", no
  /// whitespace, no leading zeros in numeric parts or numeric pre-release
  /// identifiers, no empty identifiers, identifiers only [0-9A-Za-z-], and
  /// MAJOR, MINOR and PATCH must fit in 64 bits. Errors are
  /// ErrorCode::Parse.
  static Expected<Version> parse(std::string_view text);

  /// Canonical text; Version::parse(v.str()) is identical to v.
  std::string str() const;

  bool isPrerelease() const { return !prerelease.empty(); }

  /// True when every field, build metadata included, is the same.
  bool identical(const Version &other) const;
};

/// The binary form of a version in ireepkg's caches of parsed metadata
/// (binary_form.h): appended to `out`; decodeVersion reads one from the
/// front of `in`, and on malformed input returns nullopt and leaves `in`
/// failed.
class ByteWriter;
class ByteReader;
void encodeVersion(const Version &v, ByteWriter &out);
std::optional<Version> decodeVersion(ByteReader &in);

/// SemVer precedence: negative, zero or positive as a is lower than, has the
/// same precedence as, or is higher than b. Build metadata is ignored.
int compare(const Version &a, const Version &b);

/// Precedence equality: 1.0.0+a == 1.0.0+b. Use identical() to compare
/// build metadata too.
inline bool operator==(const Version &a, const Version &b) {
  return compare(a, b) == 0;
}

/// Precedence order; gives <, <=, > and >=.
inline std::weak_ordering operator<=>(const Version &a, const Version &b) {
  int c = compare(a, b);
  if (c < 0)
    return std::weak_ordering::less;
  if (c > 0)
    return std::weak_ordering::greater;
  return std::weak_ordering::equivalent;
}

/// A set of versions in precedence order, kept as a sorted union of disjoint,
/// non-adjacent intervals so that equal sets compare equal. Membership is
/// plain precedence (no pre-release rule; see Constraint::matches) and build
/// metadata is ignored.
///
/// Every version has an immediate successor (1.2.3 -> 1.2.4-0, 1.2.3-rc ->
/// 1.2.3-rc.0), so ">1.2.3" and ">=1.2.4-0" are the same set and print the
/// same way.
class VersionSet {
public:
  /// The empty set.
  VersionSet() = default;

  static VersionSet any();
  static VersionSet none();
  static VersionSet exactly(const Version &v);
  static VersionSet atLeast(const Version &v);     ///< >= v
  static VersionSet greaterThan(const Version &v); ///< >  v
  static VersionSet lessThan(const Version &v);    ///< <  v (by precedence)
  static VersionSet atMost(const Version &v);      ///< <= v

  bool contains(const Version &v) const;

  VersionSet intersect(const VersionSet &other) const;
  VersionSet unionWith(const VersionSet &other) const;
  VersionSet complement() const;
  VersionSet difference(const VersionSet &other) const;

  bool isEmpty() const { return intervals_.empty(); }
  bool isAny() const;
  bool subsetOf(const VersionSet &other) const;
  bool disjoint(const VersionSet &other) const;

  friend bool operator==(const VersionSet &, const VersionSet &) = default;

  /// Canonical text: "*" for any, "<empty>" for none, "1.2.3" for a single
  /// version, otherwise intervals such as ">=1.2.0, <2.0.0" joined by " || ".
  ///
  /// An upper bound "<X" with X a release means "below X's first
  /// pre-release" (X-0), as in constraints, so ">=1.2.0, <2.0.0" excludes
  /// 2.0.0-rc.1 and atMost(1.2.3) prints as "<1.2.4". A set that does
  /// include the pre-releases of a release X below X prints that bound as
  /// "<X-" followed by U+221E INFINITY, as Dart's pub does
  /// ("<2.0.0-\xE2\x88\x9E" in UTF-8). A lower bound that directly follows
  /// a version u prints as ">u" (">1.2.3", not ">=1.2.4-0").
  ///
  /// Except for that infinity spelling and "<empty>", the text parses back
  /// with Constraint::parse to the same set.
  std::string str() const;

private:
  /// [lower, upper): lower inclusive, upper exclusive; nullopt is unbounded.
  /// Stored versions carry no build metadata.
  struct Interval {
    std::optional<Version> lower;
    std::optional<Version> upper;
    bool operator==(const Interval &) const = default;
  };

  static VersionSet fromIntervals(std::vector<Interval> intervals);

  friend class Constraint;

  std::vector<Interval> intervals_;
};

/// A parsed version constraint such as "^1.2", ">=1.0.0-rc.1, <2.0.0" or
/// "1.* || >=3.0.0".
///
/// Grammar: alternatives separated by "||" (union); each alternative is a
/// comma-separated list of comparators (intersection). Comparators: ">=V",
/// ">V", "<=V", "<V", "=V", bare "V", "^V", "~V" and the wildcards "*",
/// "1.*", "1.2.*" ("x" and "X" work like "*"). V may be partial ("1",
/// "1.2"); full versions may carry a pre-release, never build metadata.
class Constraint {
public:
  /// Any version; text "*".
  Constraint();

  static Expected<Constraint> parse(std::string_view text);
  static Constraint any();

  /// True iff v is in set() and either v is not a pre-release or some
  /// comparator of the constraint names a pre-release with v's
  /// MAJOR.MINOR.PATCH. So "^1.2" never matches 1.3.0-beta, while
  /// ">=1.3.0-beta" matches 1.3.0-beta.2 but not 1.4.0-alpha.
  bool matches(const Version &v) const;

  /// The text the constraint was parsed from, trimmed.
  const std::string &text() const { return text_; }
  const VersionSet &set() const { return set_; }

  /// Both constraints at once: the sets intersect, the pre-release
  /// allowances of both apply, and the texts are joined with ", ".
  Constraint intersect(const Constraint &other) const;

  /// Canonical form of set().
  std::string str() const { return set_.str(); }

  /// The binary form for caches of parsed metadata (see encodeVersion):
  /// text, set and pre-release allowances, so that decoding parses nothing.
  /// decode checks that the intervals are well formed and ordered, and
  /// returns nullopt (with `in` failed) otherwise.
  void encode(ByteWriter &out) const;
  static std::optional<Constraint> decode(ByteReader &in);

private:
  using Core = std::array<uint64_t, 3>;
  /// An empty constraint for decode() to fill (the public default,
  /// "*", builds a set it would only throw away).
  struct Blank {};
  explicit Constraint(Blank) {}

  std::string text_;
  VersionSet set_;
  /// MAJOR.MINOR.PATCH of every pre-release named by a comparator; sorted,
  /// unique.
  std::vector<Core> prereleaseCores_;
};

} // namespace ireepkg

#endif // IREEPKG_SEMVER_H
