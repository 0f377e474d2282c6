//===- manifest_schema/src/semver.cpp - Semantic versions and constraints -===//
//
// Parsing, precedence and printing of SemVer 2.0.0 versions, the interval
// algebra behind VersionSet, and the constraint syntax compiled by
// Constraint::parse.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/semver.h"
#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/base/text.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ireepkg {
namespace {

constexpr uint64_t kMaxNumber = std::numeric_limits<uint64_t>::max();

constexpr const char *kVersionHint =
    "versions look like 1.2.3 or 1.2.3-rc.1 (MAJOR.MINOR.PATCH, then an "
    "optional -PRERELEASE and +BUILD)";

constexpr const char *kConstraintHint =
    "accepted forms: 1.2.3, =1.2.3, >=1.2.3, >1.2.3, <=1.2.3, <1.2.3, "
    "^1.2.3, ~1.2.3, 1.2.*, 1.*, * (versions may be partial, as in ^1.2); "
    "join comparators with \",\" and alternatives with \"||\"";

/// Printed after "<X-" for an upper bound that keeps X's pre-releases.
constexpr const char *kInfinity = "\xE2\x88\x9E";

//===----------------------------------------------------------------------===//
// Characters and message pieces
//===----------------------------------------------------------------------===//

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isAlnum(char c) { return isDigit(c) || isAlpha(c); }
bool isIdentifierChar(char c) { return isAlnum(c) || c == '-'; }
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
bool isPrintable(char c) { return c >= ' ' && c <= '~'; }
bool isOperatorChar(char c) {
  return c == '<' || c == '>' || c == '=' || c == '^' || c == '~';
}

bool isAllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), isDigit);
}

std::string hexByte(char c) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  unsigned char u = static_cast<unsigned char>(c);
  return std::string("0x") + kDigits[u >> 4] + kDigits[u & 15];
}

/// `s` in double quotes, with quotes, backslashes and control bytes escaped.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += "\\x" + hexByte(c).substr(2);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string atColumn(size_t pos) {
  return " at column " + std::to_string(pos + 1);
}


/// The word starting at `pos`, for messages: up to whitespace, ',', '|' or
/// the end, and at least one character.
std::string_view tokenAt(std::string_view s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && !isSpace(s[end]) && s[end] != ',' && s[end] != '|')
    ++end;
  if (end == pos && pos < s.size())
    end = pos + 1;
  return s.substr(pos, end - pos);
}

/// Describes the character at `pos` as something that should not be there.
std::string unexpectedAt(std::string_view s, size_t pos) {
  if (pos >= s.size())
    return "unexpected end of input" + atColumn(pos);
  char c = s[pos];
  if (isSpace(c))
    return "unexpected whitespace" + atColumn(pos);
  if (!isPrintable(c))
    return "invalid byte " + hexByte(c) + atColumn(pos);
  if (isIdentifierChar(c) || isOperatorChar(c) || c == '.' || c == '+' ||
      c == '*' || c == ',' || c == '|')
    return "unexpected " + quoted(tokenAt(s, pos)) + atColumn(pos);
  return "invalid character " + quoted(s.substr(pos, 1)) + atColumn(pos);
}

//===----------------------------------------------------------------------===//
// Version scanner, shared by Version::parse and Constraint::parse
//===----------------------------------------------------------------------===//

/// What went wrong, phrased without the "... is not a valid ..." prefix.
struct Problem {
  std::string what;
  std::string hint; ///< specific advice; empty for the generic hint
};

using ScanResult = std::optional<Problem>;

enum class Mode {
  Version,    ///< a whole, full version; nothing may follow it
  Constraint, ///< partial versions and wildcards; ends at a delimiter
};

/// A version as written in a constraint: up to three numeric parts,
/// possibly ending in a wildcard.
struct PartialVersion {
  unsigned parts = 0;    ///< numeric parts written (0 for "*")
  bool wildcard = false; ///< ends in "*", "x" or "X"
  uint64_t numbers[3] = {0, 0, 0};
  std::vector<std::string> prerelease;
  std::vector<std::string> build;
};

/// True when the version being scanned ends at `pos`.
bool versionEndsAt(std::string_view s, size_t pos, Mode mode) {
  if (pos >= s.size())
    return true;
  if (mode == Mode::Version)
    return false;
  char c = s[pos];
  return isSpace(c) || c == ',' || c == '|' || isOperatorChar(c);
}

bool isWildcardAt(std::string_view s, size_t pos) {
  if (pos >= s.size())
    return false;
  if (s[pos] == '*')
    return true;
  return (s[pos] == 'x' || s[pos] == 'X') &&
         (pos + 1 >= s.size() || !isAlnum(s[pos + 1]));
}

/// Scans numeric part `index` (0 = MAJOR) at `pos`.
ScanResult scanNumber(std::string_view s, size_t &pos, Mode mode,
                      unsigned index, uint64_t &value) {
  std::string expected = "a number";
  if (mode == Mode::Constraint)
    expected = index == 0 ? "a version" : "a number or wildcard";

  size_t start = pos;
  size_t end = pos;
  while (end < s.size() && isAlnum(s[end]))
    ++end;
  std::string_view digits = s.substr(start, end - start);

  if (digits.empty()) {
    if (pos >= s.size())
      return Problem{
          "expected " + expected + atColumn(pos) + ", found end of input", ""};
    char c = s[pos];
    if (c == '.' || c == '-' || c == '+' || c == '*' || c == ',' || c == '|' ||
        isOperatorChar(c))
      return Problem{"expected " + expected + atColumn(pos) + ", found " +
                         quoted(tokenAt(s, pos)),
                     ""};
    return Problem{unexpectedAt(s, pos), ""};
  }
  if (!isAllDigits(digits))
    return Problem{"expected " + expected + atColumn(pos) + ", found " +
                       quoted(digits),
                   ""};
  if (digits.size() > 1 && digits[0] == '0')
    return Problem{"numeric part " + quoted(digits) + " has a leading zero" +
                       atColumn(start),
                   ""};
  uint64_t result = 0;
  for (char c : digits) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (result > (kMaxNumber - d) / 10)
      return Problem{"numeric part " + quoted(digits) + " is too large" +
                         atColumn(start) + " (the maximum is " +
                         std::to_string(kMaxNumber) + ")",
                     ""};
    result = result * 10 + d;
  }
  value = result;
  pos = end;
  return std::nullopt;
}

/// Scans dot-separated pre-release (`pre`) or build identifiers at `pos`,
/// just after the '-' or '+'.
ScanResult scanIdentifiers(std::string_view s, size_t &pos, Mode mode, bool pre,
                           std::vector<std::string> &out) {
  const char *kind = pre ? "pre-release" : "build";
  for (;;) {
    size_t start = pos;
    while (pos < s.size() && isIdentifierChar(s[pos]))
      ++pos;
    std::string_view id = s.substr(start, pos - start);
    if (id.empty()) {
      if (!versionEndsAt(s, pos, mode) && s[pos] != '.' && s[pos] != '+')
        return Problem{unexpectedAt(s, pos), ""};
      return Problem{
          std::string("empty ") + kind + " identifier" + atColumn(pos), ""};
    }
    if (pre && id.size() > 1 && id[0] == '0' && isAllDigits(id))
      return Problem{"pre-release identifier " + quoted(id) +
                         " has a leading zero" + atColumn(start),
                     ""};
    out.emplace_back(id);
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      continue;
    }
    return std::nullopt;
  }
}

/// Scans a version at `pos`. In Mode::Version it must be a full version
/// running to the end of `s`; in Mode::Constraint it may be partial or end
/// in a wildcard, may not carry build metadata, and ends at a delimiter.
ScanResult scanVersion(std::string_view s, size_t &pos, Mode mode,
                       PartialVersion &out) {
  if (pos + 1 < s.size() && (s[pos] == 'v' || s[pos] == 'V') &&
      isDigit(s[pos + 1]))
    return Problem{"leading " + quoted(s.substr(pos, 1)) + atColumn(pos) +
                       " is not allowed",
                   "write " + quoted(tokenAt(s, pos + 1)) + " without the " +
                       quoted(s.substr(pos, 1))};

  for (unsigned i = 0; i < 3; ++i) {
    if (i > 0) {
      if (versionEndsAt(s, pos, mode) || s[pos] == '-' || s[pos] == '+') {
        if (mode == Mode::Version)
          return Problem{"expected MAJOR.MINOR.PATCH", ""};
        break;
      }
      if (s[pos] != '.')
        return Problem{unexpectedAt(s, pos), ""};
      ++pos;
    }
    if (mode == Mode::Constraint && isWildcardAt(s, pos)) {
      out.wildcard = true;
      ++pos;
      continue;
    }
    if (out.wildcard)
      return Problem{"unexpected " + quoted(tokenAt(s, pos - 1)) +
                         atColumn(pos - 1),
                     "only another wildcard may follow a wildcard, as in "
                     "1.* or 1.*.*"};
    if (ScanResult p = scanNumber(s, pos, mode, i, out.numbers[i]))
      return p;
    out.parts = i + 1;
  }

  if (pos < s.size() && s[pos] == '-') {
    if (out.parts < 3 || out.wildcard)
      return Problem{"unexpected " + quoted(tokenAt(s, pos)) + atColumn(pos) +
                         "; a pre-release needs a full MAJOR.MINOR.PATCH "
                         "version",
                     ""};
    ++pos;
    if (ScanResult p = scanIdentifiers(s, pos, mode, true, out.prerelease))
      return p;
  }
  if (pos < s.size() && s[pos] == '+') {
    if (mode == Mode::Constraint) {
      std::string_view build = tokenAt(s, pos);
      return Problem{"build metadata " + quoted(build) + atColumn(pos) +
                         " is not allowed in a constraint",
                     "build metadata never affects precedence; remove " +
                         quoted(build)};
    }
    ++pos;
    if (ScanResult p = scanIdentifiers(s, pos, mode, false, out.build))
      return p;
  }
  if (!versionEndsAt(s, pos, mode)) {
    if (s[pos] == '.')
      return Problem{"unexpected " + quoted(tokenAt(s, pos)) + atColumn(pos),
                     "a version has exactly three numeric parts: "
                     "MAJOR.MINOR.PATCH"};
    return Problem{unexpectedAt(s, pos), ""};
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Successors and bumps
//===----------------------------------------------------------------------===//

Version release(uint64_t major, uint64_t minor, uint64_t patch) {
  Version v;
  v.major = major;
  v.minor = minor;
  v.patch = patch;
  return v;
}

/// v's lowest pre-release, X-0: the first version below the release X.
Version firstPrerelease(const Version &v) {
  Version out = release(v.major, v.minor, v.patch);
  out.prerelease = {"0"};
  return out;
}

bool isFirstPrerelease(const Version &v) {
  return v.prerelease.size() == 1 && v.prerelease[0] == "0";
}

/// 0.0.0-0, the lowest version there is.
bool isMinimum(const Version &v) {
  return v.major == 0 && v.minor == 0 && v.patch == 0 && isFirstPrerelease(v);
}

std::optional<Version> bumpMajor(uint64_t major) {
  if (major == kMaxNumber)
    return std::nullopt;
  return release(major + 1, 0, 0);
}

std::optional<Version> bumpMinor(uint64_t major, uint64_t minor) {
  if (minor == kMaxNumber)
    return bumpMajor(major);
  return release(major, minor + 1, 0);
}

std::optional<Version> bumpPatch(uint64_t major, uint64_t minor,
                                 uint64_t patch) {
  if (patch == kMaxNumber)
    return bumpMinor(major, minor);
  return release(major, minor, patch + 1);
}

/// The lowest version above v; there is nothing in between. 1.2.3 ->
/// 1.2.4-0 and 1.2.3-rc -> 1.2.3-rc.0. Nullopt only for the greatest release.
std::optional<Version> successor(const Version &v) {
  if (v.isPrerelease()) {
    Version out = v;
    out.build.clear();
    out.prerelease.push_back("0");
    return out;
  }
  std::optional<Version> next = bumpPatch(v.major, v.minor, v.patch);
  if (!next)
    return std::nullopt;
  return firstPrerelease(*next);
}

Version withoutBuild(const Version &v) {
  Version out = v;
  out.build.clear();
  return out;
}

/// Compares two identifiers by SemVer rule 11.4.
int compareIdentifiers(const std::string &a, const std::string &b) {
  bool aNumeric = isAllDigits(a);
  bool bNumeric = isAllDigits(b);
  if (aNumeric && bNumeric) {
    // Numeric identifiers may exceed 64 bits; compare them as digit strings.
    std::string_view x(a), y(b);
    x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
    y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
    if (x.size() != y.size())
      return x.size() < y.size() ? -1 : 1;
    int c = x.compare(y);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (aNumeric)
    return -1;
  if (bNumeric)
    return 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string joinIdentifiers(const std::vector<std::string> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i)
      out += '.';
    out += ids[i];
  }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Version
//===----------------------------------------------------------------------===//

Expected<Version> Version::parse(std::string_view text) {
  auto fail = [&](const Problem &p) {
    return makeError(ErrorCode::Parse,
                     quoted(text) + " is not a valid version: " + p.what, {},
                     p.hint.empty() ? std::string(kVersionHint) : p.hint);
  };
  if (text.empty())
    return fail(Problem{"the version is empty", ""});
  size_t pos = 0;
  PartialVersion pv;
  if (ScanResult p = scanVersion(text, pos, Mode::Version, pv))
    return fail(*p);
  Version v = release(pv.numbers[0], pv.numbers[1], pv.numbers[2]);
  v.prerelease = std::move(pv.prerelease);
  v.build = std::move(pv.build);
  return v;
}

std::string Version::str() const {
  std::string out = std::to_string(major) + '.' + std::to_string(minor) + '.' +
                    std::to_string(patch);
  if (!prerelease.empty())
    out += '-' + joinIdentifiers(prerelease);
  if (!build.empty())
    out += '+' + joinIdentifiers(build);
  return out;
}

bool Version::identical(const Version &other) const {
  return major == other.major && minor == other.minor && patch == other.patch &&
         prerelease == other.prerelease && build == other.build;
}

int compare(const Version &a, const Version &b) {
  if (a.major != b.major)
    return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor)
    return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch)
    return a.patch < b.patch ? -1 : 1;
  // A pre-release has lower precedence than its release.
  if (a.prerelease.empty() != b.prerelease.empty())
    return a.prerelease.empty() ? 1 : -1;
  size_t common = std::min(a.prerelease.size(), b.prerelease.size());
  for (size_t i = 0; i < common; ++i)
    if (int c = compareIdentifiers(a.prerelease[i], b.prerelease[i]))
      return c;
  // More identifiers win when all preceding ones are equal.
  if (a.prerelease.size() != b.prerelease.size())
    return a.prerelease.size() < b.prerelease.size() ? -1 : 1;
  return 0;
}

//===----------------------------------------------------------------------===//
// VersionSet
//===----------------------------------------------------------------------===//

namespace {

/// Lower bounds: nullopt is minus infinity.
bool lowerLess(const std::optional<Version> &a,
               const std::optional<Version> &b) {
  if (!b)
    return false;
  if (!a)
    return true;
  return compare(*a, *b) < 0;
}

/// Upper bounds: nullopt is plus infinity.
bool upperLess(const std::optional<Version> &a,
               const std::optional<Version> &b) {
  if (!a)
    return false;
  if (!b)
    return true;
  return compare(*a, *b) < 0;
}

/// A lower bound "v" and, when v directly follows some version u, the
/// shorter "> u" spelling.
std::string lowerText(const Version &v) {
  if (isFirstPrerelease(v) && v.patch > 0)
    return '>' + release(v.major, v.minor, v.patch - 1).str();
  if (v.prerelease.size() > 1 && v.prerelease.back() == "0") {
    Version u = v;
    u.prerelease.pop_back();
    return '>' + u.str();
  }
  return ">=" + v.str();
}

/// An exclusive upper bound "v". "<X" means "<X-0", as in constraints, so
/// "<=1.2.3" prints as "<1.2.4".
std::string upperText(const Version &v) {
  if (isFirstPrerelease(v))
    return '<' + release(v.major, v.minor, v.patch).str();
  if (v.prerelease.size() > 1 && v.prerelease.back() == "0") {
    Version u = v;
    u.prerelease.pop_back();
    return "<=" + u.str();
  }
  if (!v.isPrerelease())
    return '<' + v.str() + '-' + kInfinity;
  return '<' + v.str();
}

} // namespace

VersionSet VersionSet::fromIntervals(std::vector<Interval> intervals) {
  std::vector<Interval> kept;
  for (Interval &iv : intervals) {
    if (iv.lower)
      iv.lower->build.clear();
    if (iv.upper)
      iv.upper->build.clear();
    // Nothing lies below 0.0.0-0, so it is the same as no lower bound.
    if (iv.lower && isMinimum(*iv.lower))
      iv.lower.reset();
    if (iv.upper && isMinimum(*iv.upper))
      continue;
    if (iv.lower && iv.upper && compare(*iv.lower, *iv.upper) >= 0)
      continue;
    kept.push_back(std::move(iv));
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Interval &a, const Interval &b) {
                     return lowerLess(a.lower, b.lower);
                   });
  VersionSet out;
  for (Interval &iv : kept) {
    if (!out.intervals_.empty()) {
      Interval &last = out.intervals_.back();
      // Sorted by lower bound, so iv overlaps or touches last unless it
      // starts strictly above last's end.
      if (!last.upper || !iv.lower || compare(*iv.lower, *last.upper) <= 0) {
        if (upperLess(last.upper, iv.upper))
          last.upper = std::move(iv.upper);
        continue;
      }
    }
    out.intervals_.push_back(std::move(iv));
  }
  return out;
}

VersionSet VersionSet::any() {
  return fromIntervals({Interval{std::nullopt, std::nullopt}});
}

VersionSet VersionSet::none() { return VersionSet(); }

VersionSet VersionSet::exactly(const Version &v) {
  return fromIntervals({Interval{withoutBuild(v), successor(v)}});
}

VersionSet VersionSet::atLeast(const Version &v) {
  return fromIntervals({Interval{withoutBuild(v), std::nullopt}});
}

VersionSet VersionSet::greaterThan(const Version &v) {
  std::optional<Version> next = successor(v);
  if (!next)
    return none();
  return fromIntervals({Interval{std::move(next), std::nullopt}});
}

VersionSet VersionSet::lessThan(const Version &v) {
  return fromIntervals({Interval{std::nullopt, withoutBuild(v)}});
}

VersionSet VersionSet::atMost(const Version &v) {
  return fromIntervals({Interval{std::nullopt, successor(v)}});
}

bool VersionSet::contains(const Version &v) const {
  for (const Interval &iv : intervals_) {
    if (iv.lower && compare(v, *iv.lower) < 0)
      return false; // sorted: every later interval starts higher still
    if (!iv.upper || compare(v, *iv.upper) < 0)
      return true;
  }
  return false;
}

VersionSet VersionSet::intersect(const VersionSet &other) const {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < intervals_.size() && j < other.intervals_.size()) {
    const Interval &a = intervals_[i];
    const Interval &b = other.intervals_[j];
    Interval both{lowerLess(a.lower, b.lower) ? b.lower : a.lower,
                  upperLess(a.upper, b.upper) ? a.upper : b.upper};
    out.push_back(std::move(both)); // empty pieces are dropped below
    if (upperLess(a.upper, b.upper))
      ++i;
    else
      ++j;
  }
  return fromIntervals(std::move(out));
}

VersionSet VersionSet::unionWith(const VersionSet &other) const {
  std::vector<Interval> all = intervals_;
  all.insert(all.end(), other.intervals_.begin(), other.intervals_.end());
  return fromIntervals(std::move(all));
}

VersionSet VersionSet::complement() const {
  std::vector<Interval> out;
  std::optional<Version> gapStart; // nullopt: minus infinity
  for (const Interval &iv : intervals_) {
    if (iv.lower)
      out.push_back(Interval{gapStart, iv.lower});
    if (!iv.upper)
      return fromIntervals(std::move(out));
    gapStart = iv.upper;
  }
  out.push_back(Interval{gapStart, std::nullopt});
  return fromIntervals(std::move(out));
}

VersionSet VersionSet::difference(const VersionSet &other) const {
  return intersect(other.complement());
}

bool VersionSet::isAny() const {
  return intervals_.size() == 1 && !intervals_[0].lower && !intervals_[0].upper;
}

bool VersionSet::subsetOf(const VersionSet &other) const {
  return difference(other).isEmpty();
}

bool VersionSet::disjoint(const VersionSet &other) const {
  return intersect(other).isEmpty();
}

std::string VersionSet::str() const {
  if (isEmpty())
    return "<empty>";
  if (isAny())
    return "*";
  std::string out;
  for (const Interval &iv : intervals_) {
    if (!out.empty())
      out += " || ";
    if (iv.lower && successor(*iv.lower) == iv.upper) {
      out += iv.lower->str();
      continue;
    }
    std::string piece;
    if (iv.lower)
      piece = lowerText(*iv.lower);
    if (iv.upper) {
      if (!piece.empty())
        piece += ", ";
      piece += upperText(*iv.upper);
    }
    out += piece;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Constraint
//===----------------------------------------------------------------------===//

namespace {

/// [lower, upper) from optional bounds; nullopt is unbounded.
VersionSet between(const std::optional<Version> &lower,
                   const std::optional<Version> &upper) {
  VersionSet out = VersionSet::any();
  if (lower)
    out = out.intersect(VersionSet::atLeast(*lower));
  if (upper)
    out = out.intersect(VersionSet::lessThan(*upper));
  return out;
}

/// "Below the first pre-release of v"; unbounded when v is.
std::optional<Version> belowRelease(const std::optional<Version> &v) {
  if (!v)
    return std::nullopt;
  return firstPrerelease(*v);
}

/// The set one comparator stands for. `op` is "" for a bare version.
VersionSet comparatorSet(std::string_view op, const PartialVersion &pv) {
  const uint64_t *n = pv.numbers;
  Version low = release(n[0], n[1], n[2]); // missing parts are zero
  low.prerelease = pv.prerelease;

  // Where a partial version's lower bound is 0.0.0 ("0", "0.0", "^0"), it
  // covers 0.0.0's pre-releases too, so it has no lower bound at all.
  std::optional<Version> lower = low;
  if (pv.parts < 3 && n[0] == 0 && n[1] == 0 && n[2] == 0)
    lower.reset();

  // The first release after every version the partial version covers.
  std::optional<Version> next;
  if (pv.parts == 1)
    next = bumpMajor(n[0]);
  else if (pv.parts == 2)
    next = bumpMinor(n[0], n[1]);

  if (op.empty() || op == "=") {
    if (pv.parts == 0)
      return VersionSet::any();
    if (pv.parts == 3)
      return VersionSet::exactly(low);
    return between(lower, belowRelease(next));
  }
  if (op == ">=")
    return between(lower, std::nullopt);
  if (op == ">") {
    if (pv.parts == 3)
      return VersionSet::greaterThan(low);
    if (!next)
      return VersionSet::none();
    return VersionSet::atLeast(*next);
  }
  if (op == "<=") {
    if (pv.parts == 3)
      return VersionSet::atMost(low);
    return between(std::nullopt, belowRelease(next));
  }
  if (op == "<") {
    // An upper bound written without a pre-release excludes its
    // pre-releases: "<2.0.0" is "<2.0.0-0".
    if (low.isPrerelease())
      return VersionSet::lessThan(low);
    return VersionSet::lessThan(firstPrerelease(low));
  }
  if (op == "^") {
    std::optional<Version> upper;
    if (n[0] > 0 || pv.parts == 1)
      upper = bumpMajor(n[0]);
    else if (n[1] > 0 || pv.parts == 2)
      upper = bumpMinor(0, n[1]);
    else
      upper = bumpPatch(0, 0, n[2]);
    return between(lower, belowRelease(upper));
  }
  // "~"
  std::optional<Version> upper =
      pv.parts == 1 ? bumpMajor(n[0]) : bumpMinor(n[0], n[1]);
  return between(lower, belowRelease(upper));
}

/// The comparator operator at `pos`, or "" for none.
std::string_view operatorAt(std::string_view s, size_t pos) {
  for (std::string_view op : {">=", "<=", ">", "<", "=", "^", "~"})
    if (s.substr(pos, op.size()) == op)
      return op;
  return {};
}

} // namespace

Constraint::Constraint() : text_("*"), set_(VersionSet::any()) {}

Constraint Constraint::any() { return Constraint(); }

Expected<Constraint> Constraint::parse(std::string_view text) {
  std::string_view t = trim(text);
  auto fail = [&](const std::string &what, const std::string &hint = {}) {
    return makeError(ErrorCode::Parse,
                     quoted(t) + " is not a valid version constraint: " + what,
                     {},
                     hint.empty() ? std::string(kConstraintHint)
                                  : hint + "; " + kConstraintHint);
  };
  if (t.empty())
    return fail("the constraint is empty");

  auto skipSpace = [&](size_t &pos) {
    while (pos < t.size() && isSpace(t[pos]))
      ++pos;
  };

  Constraint out;
  out.text_ = std::string(t);
  out.set_ = VersionSet::none();

  size_t pos = 0;
  std::string_view lastSeparator;
  size_t lastSeparatorPos = 0;
  bool done = false;
  while (!done) {
    VersionSet alternative = VersionSet::any();
    for (;;) {
      skipSpace(pos);
      if (pos >= t.size())
        return fail("expected a comparator after " + quoted(lastSeparator) +
                    atColumn(lastSeparatorPos));
      if (t[pos] == ',' || t[pos] == '|')
        return fail("unexpected " +
                    quoted(t.substr(pos, t.substr(pos, 2) == "||" ? 2 : 1)) +
                    atColumn(pos));

      size_t opPos = pos;
      std::string_view op = operatorAt(t, pos);
      pos += op.size();
      if (!op.empty()) {
        skipSpace(pos);
        if (pos >= t.size() || t[pos] == ',' || t[pos] == '|' ||
            isOperatorChar(t[pos]))
          return fail("expected a version after " + quoted(op) +
                      atColumn(opPos));
      }

      size_t versionPos = pos;
      PartialVersion pv;
      if (ScanResult p = scanVersion(t, pos, Mode::Constraint, pv))
        return fail(p->what, p->hint);
      if (!op.empty() && pv.parts == 0)
        return fail("unexpected " +
                        quoted(t.substr(versionPos, pos - versionPos)) +
                        atColumn(versionPos) + " after " + quoted(op),
                    "a wildcard stands alone; write \"*\" for any version");

      alternative = alternative.intersect(comparatorSet(op, pv));
      if (!pv.prerelease.empty())
        out.prereleaseCores_.push_back(
            Core{pv.numbers[0], pv.numbers[1], pv.numbers[2]});

      skipSpace(pos);
      if (pos >= t.size()) {
        done = true;
        break;
      }
      if (t[pos] == ',') {
        lastSeparator = t.substr(pos, 1);
        lastSeparatorPos = pos++;
        continue;
      }
      if (t.substr(pos, 2) == "||") {
        lastSeparator = t.substr(pos, 2);
        lastSeparatorPos = pos;
        pos += 2;
        break;
      }
      if (t[pos] == '|')
        return fail("unexpected \"|\"" + atColumn(pos),
                    "join alternatives with \"||\"");
      return fail("missing \",\" before " + quoted(tokenAt(t, pos)) +
                      atColumn(pos),
                  "separate comparators with \",\", as in >=1.0.0, <2.0.0");
    }
    out.set_ = out.set_.unionWith(alternative);
  }

  std::sort(out.prereleaseCores_.begin(), out.prereleaseCores_.end());
  out.prereleaseCores_.erase(
      std::unique(out.prereleaseCores_.begin(), out.prereleaseCores_.end()),
      out.prereleaseCores_.end());
  return out;
}

bool Constraint::matches(const Version &v) const {
  if (!set_.contains(v))
    return false;
  if (!v.isPrerelease())
    return true;
  return std::binary_search(prereleaseCores_.begin(), prereleaseCores_.end(),
                            Core{v.major, v.minor, v.patch});
}

Constraint Constraint::intersect(const Constraint &other) const {
  Constraint out;
  out.text_ = text_ + ", " + other.text_;
  out.set_ = set_.intersect(other.set_);
  out.prereleaseCores_ = prereleaseCores_;
  out.prereleaseCores_.insert(out.prereleaseCores_.end(),
                              other.prereleaseCores_.begin(),
                              other.prereleaseCores_.end());
  std::sort(out.prereleaseCores_.begin(), out.prereleaseCores_.end());
  out.prereleaseCores_.erase(
      std::unique(out.prereleaseCores_.begin(), out.prereleaseCores_.end()),
      out.prereleaseCores_.end());
  return out;
}

//===----------------------------------------------------------------------===//
// Binary form (caches of parsed metadata)
//===----------------------------------------------------------------------===//

namespace {

void encodeIdentifiers(const std::vector<std::string> &ids, ByteWriter &out) {
  out.u32(static_cast<uint32_t>(ids.size()));
  for (const std::string &id : ids)
    out.str(id);
}

bool decodeIdentifiers(ByteReader &in, std::vector<std::string> &ids) {
  uint32_t n = in.count(4);
  ids.reserve(n);
  for (uint32_t i = 0; i < n && in.ok(); ++i) {
    std::string_view id = in.str();
    if (id.empty()) { // SemVer has no empty identifier
      in.fail();
      break;
    }
    ids.emplace_back(id);
  }
  return in.ok();
}

} // namespace

void encodeVersion(const Version &v, ByteWriter &out) {
  out.u64(v.major);
  out.u64(v.minor);
  out.u64(v.patch);
  encodeIdentifiers(v.prerelease, out);
  encodeIdentifiers(v.build, out);
}

std::optional<Version> decodeVersion(ByteReader &in) {
  Version v;
  v.major = in.u64();
  v.minor = in.u64();
  v.patch = in.u64();
  if (!decodeIdentifiers(in, v.prerelease) || !decodeIdentifiers(in, v.build))
    return std::nullopt;
  return v;
}

void Constraint::encode(ByteWriter &out) const {
  out.str(text_);
  out.u32(static_cast<uint32_t>(set_.intervals_.size()));
  for (const VersionSet::Interval &iv : set_.intervals_) {
    out.u8(static_cast<uint8_t>((iv.lower ? 1 : 0) | (iv.upper ? 2 : 0)));
    if (iv.lower)
      encodeVersion(*iv.lower, out);
    if (iv.upper)
      encodeVersion(*iv.upper, out);
  }
  out.u32(static_cast<uint32_t>(prereleaseCores_.size()));
  for (const Core &c : prereleaseCores_)
    for (uint64_t n : c)
      out.u64(n);
}

std::optional<Constraint> Constraint::decode(ByteReader &in) {
  Constraint c{Blank{}};
  c.text_ = std::string(in.str());
  uint32_t n = in.count(1);
  c.set_.intervals_.reserve(n);
  for (uint32_t i = 0; i < n && in.ok(); ++i) {
    uint8_t bounds = in.u8();
    VersionSet::Interval iv;
    if (bounds & ~3u)
      in.fail();
    if (bounds & 1)
      iv.lower = decodeVersion(in);
    if (bounds & 2)
      iv.upper = decodeVersion(in);
    if (!in.ok())
      break;
    // What fromIntervals guarantees: non-empty intervals, in order, apart;
    // only the first unbounded below and only the last above.
    bool bad = (iv.lower && iv.upper && compare(*iv.lower, *iv.upper) >= 0) ||
               (i > 0 && !iv.lower) || (i + 1 < n && !iv.upper);
    if (!bad && i > 0)
      bad = compare(*c.set_.intervals_.back().upper, *iv.lower) >= 0;
    if (bad)
      in.fail();
    else
      c.set_.intervals_.push_back(std::move(iv));
  }
  uint32_t cores = in.count(24);
  c.prereleaseCores_.reserve(cores);
  for (uint32_t i = 0; i < cores && in.ok(); ++i) {
    Core core{in.u64(), in.u64(), in.u64()};
    if (i > 0 && !(c.prereleaseCores_.back() < core))
      in.fail(); // sorted and unique, for binary_search
    c.prereleaseCores_.push_back(core);
  }
  if (!in.ok() || c.text_.empty())
    return std::nullopt;
  return c;
}

} // namespace ireepkg
