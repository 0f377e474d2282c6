//===- pkg/src/resolve/resolver.cpp - PubGrub dependency resolution -------===//
//
// The solver follows the public description of PubGrub (Dart pub's
// doc/solver.md): a partial solution of decisions and derivations, external
// and derived incompatibilities, unit propagation indexed by package,
// conflict resolution with the generalised resolution rule and learning,
// decision making, and error reporting from the derivation graph.
//
// Versions as bits. A package's versions are loaded once and sorted once;
// every term about the package is a bit set over that list (the versions it
// names) plus a polarity. All solving works on these bits: they are exact
// for the published versions and already apply the pre-release rule of
// Constraint::matches. Relations, intersections, unions and candidate counts
// are a few word operations; no VersionSet is touched while solving.
//
// Ranges for people. Explanations need ranges, so every term also has a
// VersionSet, computed only when a failure is explained: external facts know
// theirs (a dependency's constraint, a run of versions), and derived
// incompatibilities redo their resolution step on ranges, causes first. Bits
// know which versions exist and ranges do not; where a step relied on that
// (the two ranges resolved on leave out versions that no published version
// is in), the explanation gains the fact "no versions of X match S" there,
// so that every line follows from the ranges it prints. A dependency that no
// published version meets gets that fact (or "X does not exist") at once.
//
// Runs. Dependencies of adjacent versions with the same constraint text
// share one incompatibility, whose range runs from the first such version
// (unbounded if it is the oldest) to just below the next version that
// differs (unbounded if none does), as pub does; unusable versions (yanked,
// another IREE, no build for a platform) are grouped the same way and print
// as the version itself when the run has one. VersionSet keeps the
// pre-releases of X between "<X" and ">=X"; where X is published none of
// them is, so derived ranges give each such sliver to both neighbours or to
// neither: "foo <1.1.0" and "foo >=1.1.0" make "foo".
//
// Search. The package with the fewest usable candidates left is decided
// first (ties: first seen), at its locked version if allowed, else its
// newest allowed one; a version whose new dependencies would conflict at
// once is not decided, and propagation rules it out instead. After a
// conflict the solver backjumps to the level PubGrub names, except that a
// jump over more than kMaxBackjump levels only undoes the conflicting level
// (chronological backtracking): the learned incompatibility still applies
// there, and the many unrelated decisions above the target are kept instead
// of being made again. Incompatibilities are scanned newest first, and each
// package's list holds a copy of the term about it, so most are passed over
// without being read.
//
// Why one file of this size: the solver's parts (partial solution,
// incompatibilities, propagation, conflict resolution, explanations) share
// private state and invariants that would otherwise have to become API.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/resolve/resolver.h"
#include "ireepkg/base/teardown.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ireepkg {

PackageSource::~PackageSource() = default;
void PackageSource::prefetch(const std::vector<std::string> &) {}

namespace {

//===----------------------------------------------------------------------===//
// Bits: a set of version indices of one package
//===----------------------------------------------------------------------===//

/// A set of a package's versions: bit i is its i-th version in ascending
/// precedence. Binary operations take operands of the same package. Up to
/// 64 versions need no allocation.
class Bits {
public:
  Bits() : word_(0) {}
  explicit Bits(uint32_t size) : size_(size), word_(0) {
    if (big())
      heap_ = new uint64_t[words()]();
  }
  Bits(const Bits &other) : size_(other.size_), word_(0) {
    if (big()) {
      heap_ = new uint64_t[words()];
      std::copy_n(other.heap_, words(), heap_);
    } else {
      word_ = other.word_;
    }
  }
  Bits(Bits &&other) noexcept : word_(0) { take(other); }
  Bits &operator=(const Bits &other) {
    if (this != &other)
      *this = Bits(other);
    return *this;
  }
  Bits &operator=(Bits &&other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~Bits() { release(); }

  /// Versions lo..hi, both included.
  static Bits range(uint32_t size, uint32_t lo, uint32_t hi) {
    Bits out(size);
    for (uint32_t i = lo; i <= hi; ++i)
      out.set(i);
    return out;
  }
  static Bits all(uint32_t size) {
    return size ? range(size, 0, size - 1) : Bits(0);
  }

  bool test(uint32_t i) const { return (data()[i / 64] >> (i % 64)) & 1; }
  void set(uint32_t i) { data()[i / 64] |= uint64_t(1) << (i % 64); }

  bool none() const {
    if (!big())
      return word_ == 0;
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (heap_[w])
        return false;
    return true;
  }
  /// |this ∩ other|.
  uint32_t countAnd(const Bits &other) const {
    if (!big())
      return uint32_t(std::popcount(word_ & other.word_));
    uint32_t out = 0;
    for (uint32_t w = 0, n = words(); w < n; ++w)
      out += uint32_t(std::popcount(heap_[w] & other.heap_[w]));
    return out;
  }
  /// The highest index in the set, or -1.
  int32_t highest() const {
    const uint64_t *a = data();
    for (uint32_t w = words(); w-- > 0;)
      if (a[w])
        return int32_t(w * 64 + 63 - uint32_t(std::countl_zero(a[w])));
    return -1;
  }
  bool subsetOf(const Bits &other) const {
    if (!big())
      return (word_ & ~other.word_) == 0;
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (heap_[w] & ~other.heap_[w])
        return false;
    return true;
  }
  bool intersects(const Bits &other) const {
    if (!big())
      return (word_ & other.word_) != 0;
    for (uint32_t w = 0, n = words(); w < n; ++w)
      if (heap_[w] & other.heap_[w])
        return true;
    return false;
  }

  Bits operator&(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a & b; });
  }
  Bits operator|(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a | b; });
  }
  /// this \ other.
  Bits minus(const Bits &other) const {
    return combine(other, [](uint64_t a, uint64_t b) { return a & ~b; });
  }

private:
  bool big() const { return size_ > 64; }
  uint32_t words() const { return (size_ + 63) / 64; }
  uint64_t *data() { return big() ? heap_ : &word_; }
  const uint64_t *data() const { return big() ? heap_ : &word_; }
  void release() {
    if (big())
      delete[] heap_;
  }
  /// Takes other's contents, leaving it empty.
  void take(Bits &other) {
    size_ = other.size_;
    if (big())
      heap_ = other.heap_;
    else
      word_ = other.word_;
    other.size_ = 0;
    other.word_ = 0;
  }

  template <typename Op> Bits combine(const Bits &other, Op op) const {
    Bits out(size_);
    if (!big()) {
      out.word_ = op(word_, other.word_);
      return out;
    }
    for (uint32_t w = 0, n = words(); w < n; ++w)
      out.heap_[w] = op(heap_[w], other.heap_[w]);
    return out;
  }

  uint32_t size_ = 0;
  union {
    uint64_t word_;  ///< size_ <= 64
    uint64_t *heap_; ///< size_ > 64
  };
};

//===----------------------------------------------------------------------===//
// Terms
//===----------------------------------------------------------------------===//

/// "pkg is selected at one of bits" (positive) or "pkg is not selected at
/// any of bits" (negative; true as well when pkg is not selected at all).
struct Term {
  uint32_t pkg = 0;
  bool positive = true;
  Bits bits;
};

/// A term with the same versions as a range, for explanations.
struct ShownTerm {
  Term term;
  VersionSet set;
};

enum class Relation : uint8_t { Satisfied, Contradicted, Inconclusive };

/// How what is known about a package (`known`: an accumulated term, or
/// nothing) relates to the term (tPositive, t). The innermost loop of unit
/// propagation.
[[gnu::always_inline]] inline Relation relate(bool known, bool aPositive,
                                              const Bits &a, bool tPositive,
                                              const Bits &t) {
  if (!known) {
    // Anything may still happen; only terms about no version are decided.
    if (t.none())
      return tPositive ? Relation::Contradicted : Relation::Satisfied;
    return Relation::Inconclusive;
  }
  if (aPositive) {
    if (tPositive) {
      if (a.subsetOf(t))
        return Relation::Satisfied;
      return a.intersects(t) ? Relation::Inconclusive : Relation::Contradicted;
    }
    if (!a.intersects(t))
      return Relation::Satisfied;
    return a.subsetOf(t) ? Relation::Contradicted : Relation::Inconclusive;
  }
  // `a` allows "not selected", which a positive term never does and a
  // negative term always does.
  if (tPositive)
    return t.subsetOf(a) ? Relation::Contradicted : Relation::Inconclusive;
  return t.subsetOf(a) ? Relation::Satisfied : Relation::Inconclusive;
}

/// a := a ∩ t, on bits.
void intersectBits(bool &aPositive, Bits &a, bool tPositive, const Bits &t) {
  if (aPositive && tPositive)
    a = a & t;
  else if (aPositive)
    a = a.minus(t);
  else if (tPositive) {
    a = t.minus(a);
    aPositive = true;
  } else
    a = a | t;
}

/// a ∩ b, both about the same package; ranges too when `shown`.
ShownTerm intersectTerms(const ShownTerm &a, const ShownTerm &b, bool shown) {
  ShownTerm out = a;
  bool ap = a.term.positive, bp = b.term.positive;
  if (shown) {
    if (ap && bp)
      out.set = a.set.intersect(b.set);
    else if (ap)
      out.set = a.set.difference(b.set);
    else if (bp)
      out.set = b.set.difference(a.set);
    else
      out.set = a.set.unionWith(b.set);
  }
  intersectBits(out.term.positive, out.term.bits, bp, b.term.bits);
  return out;
}

/// a ∪ b, both about the same package; ranges too when `shown`.
ShownTerm unionTerms(const ShownTerm &a, const ShownTerm &b, bool shown) {
  ShownTerm out;
  out.term.pkg = a.term.pkg;
  const Bits &x = a.term.bits, &y = b.term.bits;
  bool ap = a.term.positive, bp = b.term.positive;
  out.term.positive = ap && bp;
  if (ap && bp) {
    out.term.bits = x | y;
    if (shown)
      out.set = a.set.unionWith(b.set);
  } else if (ap) {
    out.term.bits = y.minus(x);
    if (shown)
      out.set = b.set.difference(a.set);
  } else if (bp) {
    out.term.bits = x.minus(y);
    if (shown)
      out.set = a.set.difference(b.set);
  } else {
    out.term.bits = x & y;
    if (shown)
      out.set = a.set.intersect(b.set);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Incompatibilities, assignments, packages
//===----------------------------------------------------------------------===//

enum class Kind : uint8_t {
  Dependency, ///< pkg's versions lo..hi depend on dep `constraint`
  NoVersions, ///< no version of pkg is in `range`
  NotFound,   ///< pkg does not exist
  Yanked,     ///< pkg's versions lo..hi are yanked
  Iree,       ///< pkg's versions lo..hi require another IREE
  NoBuild,    ///< pkg's versions lo..hi lack a build for `platform`
  Derived,    ///< follows from cause1 and cause2
};

struct Incompat {
  Kind kind = Kind::Derived;
  /// At most one term per package.
  std::vector<Term> terms;
  /// The terms' ranges, for explanations: empty until needed.
  std::vector<VersionSet> sets;
  /// Derived: the package the two causes were resolved on.
  uint32_t pivot = 0;

  uint32_t pkg = 0;
  uint32_t lo = 0, hi = 0;
  uint32_t dep = 0;
  const Constraint *constraint = nullptr; ///< Dependency, Iree
  uint32_t platform = 0;                  ///< NoBuild: request index
  VersionSet range;                       ///< NoVersions
  int32_t cause1 = -1, cause2 = -1;       ///< Derived
};

struct Assignment {
  uint32_t pkg = 0;
  /// The assignment's own term.
  bool positive = true;
  Bits bits;
  /// Everything known about pkg up to and including this assignment.
  bool accPositive = true;
  Bits acc;
  uint32_t level = 0;
  int32_t cause = -1; ///< the incompatibility it follows from; -1: decision
  int32_t prev = -1;  ///< the previous assignment about pkg
};

/// What the partial solution says about a package now; kept apart from
/// Package so that unit propagation reads little memory.
struct State {
  int32_t last = -1;     ///< the latest assignment about it, or -1
  int32_t decision = -1; ///< the decided version, or -1
  bool positive = true;  ///< with acc: everything known, when last >= 0
  bool queued = false;
  int32_t heapCount = -1; ///< count of its newest entry in candidates_
  Bits acc;
};

/// An incompatibility that has a term about a package: which term, and a
/// copy of it, so that propagation can often skip the incompatibility
/// without reading it.
struct Use {
  uint32_t id;
  uint32_t term;
  bool positive;
  Bits bits;
};

/// Why a version may not be chosen.
enum class Unusable : uint8_t { None, Iree, NoBuild, Yanked };

/// Backjumps over more levels than this only undo the conflict's level.
constexpr uint32_t kMaxBackjump = 100;

constexpr int32_t kUnset = -1;   ///< dependency not yet turned into a fact
constexpr int32_t kVacuous = -2; ///< dependency that forbids nothing

struct VersionInfo {
  /// For each dependency in map order, its incompatibility, kUnset or
  /// kVacuous; empty until the version or a neighbour is first decided.
  std::vector<int32_t> depIncompat;
  Unusable unusable = Unusable::None;
  uint32_t platform = 0; ///< NoBuild: the first missing platform
  int32_t unusableIncompat = -1;
};

/// The unpublished pre-releases [X-0, X) of a published release X.
struct Sliver {
  Version release;              ///< X
  std::optional<Version> below; ///< the version just below X-0
  VersionSet set;               ///< [X-0, X)
  Version first;                ///< X-0
};

struct Package {
  std::string name;
  bool loaded = false;
  bool exists = true;
  uint32_t size = 0;                      ///< number of versions
  std::vector<CandidateVersion> versions; ///< ascending precedence
  std::vector<VersionInfo> info;
  Bits usable;
  int32_t preferred = -1;
  /// Constraint text -> the versions it matches.
  std::unordered_map<std::string, Bits> matchCache;
  /// Computed on first use.
  std::optional<std::vector<Sliver>> slivers;
  /// Every registered incompatibility with a term about this package.
  std::vector<Use> uses;
};

std::string joinList(const std::vector<std::string> &items, const char *last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += i + 1 == items.size() ? last : ", ";
    out += items[i];
  }
  return out;
}

/// The exclusive upper bound that stops just below v and prints as "<v".
Version justBelow(const Version &v) {
  Version out;
  out.major = v.major;
  out.minor = v.minor;
  out.patch = v.patch;
  out.prerelease =
      v.isPrerelease() ? v.prerelease : std::vector<std::string>{"0"};
  return out;
}

//===----------------------------------------------------------------------===//
// The solver
//===----------------------------------------------------------------------===//

class Solver {
public:
  Solver(const ResolveRequest &request, PackageSource &source)
      : request_(request), source_(source) {}

  Expected<Resolution> run();

private:
  // Packages.
  uint32_t intern(const std::string &name);
  Status load(uint32_t id);
  /// Tells the source which of the packages `deps` name load() will be
  /// asked for (PackageSource::prefetch): those not loaded nor named to it
  /// before, when there are at least `minimum`.
  void hint(const std::vector<Dependency> &deps, size_t minimum);
  const Bits &matching(uint32_t id, const Constraint &c);
  VersionSet runSet(uint32_t id, uint32_t lo, uint32_t hi) const;
  void normalize(uint32_t id, VersionSet &set);

  // Incompatibilities.
  uint32_t add(Incompat incompat);
  uint32_t registerIncompat(uint32_t id);
  uint32_t addDerived(std::vector<ShownTerm> terms, uint32_t cause1,
                      uint32_t cause2, uint32_t pivot, bool shown);
  std::vector<ShownTerm> resolvent(uint32_t a, uint32_t b, uint32_t pivot,
                                   bool shown,
                                   std::optional<ShownTerm> *united);
  void showDerived(uint32_t id);
  uint32_t addNoVersions(uint32_t pkg, VersionSet range);
  Expected<int32_t> addDependency(uint32_t pkg, uint32_t lo, uint32_t hi,
                                  uint32_t dep, const Constraint &c);
  void unusableIncompat(uint32_t pkg, uint32_t v);
  void ensureSets(uint32_t id);
  bool isTerminal(const Incompat &incompat) const;

  // Partial solution.
  Relation relation(const Term &t) const;
  void addAssignment(uint32_t pkg, bool positive, Bits bits, int32_t cause);
  void backtrack(uint32_t level);
  void deriveFrom(uint32_t id);
  void enqueue(uint32_t pkg);
  void pushCandidate(uint32_t pkg);
  std::optional<uint32_t> pick();
  int32_t earliestSatisfier(const Term &t) const;

  // The algorithm.
  bool propagate();
  std::optional<uint32_t> resolveConflict(uint32_t id);
  uint32_t priorCause(uint32_t id, uint32_t cause, uint32_t pkg);
  Status decide(uint32_t pkg);
  bool wouldConflict(uint32_t id, uint32_t pkg, uint32_t v) const;
  Resolution solution() const;

  // Explanations.
  std::string explain(uint32_t terminal);
  std::string describe(uint32_t id) const;
  /// The conflict error for the explanation of `id`: when an IREE
  /// requirement is part of it, the hint says where that requirement lives.
  Unexpected conflict(uint32_t id);
  /// Packages whose requires.iree an explanation named.
  mutable std::set<std::string> ireeBlamed_;
  std::string termText(const Term &t, const VersionSet &set) const;
  std::string rangeText(uint32_t pkg, uint32_t lo, uint32_t hi,
                        bool everyVersion) const;
  std::string unusableText(const Incompat &in) const;

  const ResolveRequest &request_;
  PackageSource &source_;
  std::deque<Package> packages_; ///< [0] is the root
  std::vector<State> states_;    ///< by package
  std::unordered_map<std::string, uint32_t> ids_;
  std::unordered_set<std::string> hinted_; ///< named to prefetch() before
  std::deque<Incompat> incompats_;
  std::vector<Assignment> assignments_;
  uint32_t level_ = 0;
  std::deque<uint32_t> queue_;
  std::vector<uint32_t> touched_; ///< backtrack's scratch space
  /// (remaining candidates, package): packages to decide, lazily updated.
  std::priority_queue<std::pair<uint32_t, uint32_t>,
                      std::vector<std::pair<uint32_t, uint32_t>>,
                      std::greater<>>
      candidates_;
  uint32_t terminal_ = 0;
};

uint32_t Solver::intern(const std::string &name) {
  auto [it, inserted] = ids_.try_emplace(name, uint32_t(packages_.size()));
  if (inserted) {
    packages_.emplace_back().name = name;
    states_.emplace_back();
  }
  return it->second;
}

void Solver::hint(const std::vector<Dependency> &deps, size_t minimum) {
  std::vector<std::string> names;
  for (const Dependency &d : deps)
    if (auto it = ids_.find(d.name);
        (it == ids_.end() || !packages_[it->second].loaded) &&
        hinted_.insert(d.name).second)
      names.push_back(d.name);
  if (names.size() >= minimum)
    source_.prefetch(names);
}

Status Solver::load(uint32_t id) {
  Package &p = packages_[id];
  if (p.loaded)
    return ok();
  p.loaded = true;
  Expected<std::vector<CandidateVersion>> got = source_.versions(p.name);
  if (!got) {
    if (got.error().code != ErrorCode::NotFound)
      return Unexpected(got.error());
    p.exists = false;
    return ok();
  }

  // Ascending precedence; among versions of equal precedence (which differ
  // in build metadata only) keep one, chosen independently of the order.
  // Sources usually list versions in order already: check before moving.
  std::vector<CandidateVersion> vs = std::move(*got);
  auto buildText = [](const Version &v) {
    std::string out;
    for (const std::string &id : v.build)
      out += id + ".";
    return out;
  };
  auto before = [&](const CandidateVersion &a, const CandidateVersion &b) {
    if (int c = compare(a.version, b.version))
      return c < 0;
    if (a.version.build.empty() || b.version.build.empty())
      return a.version.build.empty() && !b.version.build.empty();
    return buildText(a.version) < buildText(b.version);
  };
  if (!std::is_sorted(vs.begin(), vs.end(), before)) {
    std::vector<uint32_t> order(vs.size());
    for (uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return before(vs[a], vs[b]); });
    std::vector<CandidateVersion> sorted;
    sorted.reserve(vs.size());
    for (uint32_t i : order)
      sorted.push_back(std::move(vs[i]));
    vs = std::move(sorted);
  }
  vs.erase(
      std::unique(vs.begin(), vs.end(),
                  [](const CandidateVersion &a, const CandidateVersion &b) {
                    return a.version == b.version;
                  }),
      vs.end());
  p.versions = std::move(vs);
  p.size = uint32_t(p.versions.size());
  p.info.resize(p.size);
  p.usable = Bits(p.size);

  bool locked = !request_.upgradeAll && !request_.upgrade.count(p.name);
  if (auto it = request_.preferred.find(p.name);
      locked && it != request_.preferred.end())
    for (uint32_t i = 0; i < p.size; ++i)
      if (p.versions[i].version == it->second)
        p.preferred = int32_t(i);

  for (uint32_t i = 0; i < p.size; ++i) {
    const CandidateVersion &cv = p.versions[i];
    VersionInfo &info = p.info[i];

    if (cv.requiresIree && request_.ireeVersion &&
        !cv.requiresIree->set().contains(*request_.ireeVersion)) {
      info.unusable = Unusable::Iree;
    } else if (!cv.platforms.empty()) {
      for (uint32_t k = 0; k < request_.platforms.size(); ++k)
        if (std::find(cv.platforms.begin(), cv.platforms.end(),
                      request_.platforms[k]) == cv.platforms.end()) {
          info.unusable = Unusable::NoBuild;
          info.platform = k;
          break;
        }
    }
    if (info.unusable == Unusable::None && cv.yanked &&
        p.preferred != int32_t(i))
      info.unusable = Unusable::Yanked;
    if (info.unusable == Unusable::None)
      p.usable.set(i);
  }

  // The version decide() will most likely choose (the locked one, else the
  // newest usable): the source may read its dependencies ahead, long
  // before they are needed (decisions come in another order).
  if (!p.usable.none())
    hint(p.versions[p.preferred >= 0 && p.usable.test(uint32_t(p.preferred))
                        ? uint32_t(p.preferred)
                        : uint32_t(p.usable.highest())]
             .dependencies,
         1);
  return ok();
}

const Bits &Solver::matching(uint32_t id, const Constraint &c) {
  Package &p = packages_[id];
  auto [it, inserted] = p.matchCache.try_emplace(c.text(), p.size);
  if (inserted)
    for (uint32_t i = 0; i < p.size; ++i)
      if (c.matches(p.versions[i].version))
        it->second.set(i);
  return it->second;
}

/// Versions lo..hi as a range: from the first (unbounded if it is the
/// oldest) to just below the next version (unbounded if hi is the newest).
VersionSet Solver::runSet(uint32_t id, uint32_t lo, uint32_t hi) const {
  const Package &p = packages_[id];
  if (id == 0)
    return VersionSet::any();
  VersionSet out = VersionSet::any();
  if (lo > 0)
    out = VersionSet::atLeast(p.versions[lo].version);
  if (hi + 1 < p.size)
    out = out.intersect(
        VersionSet::lessThan(justBelow(p.versions[hi + 1].version)));
  return out;
}

/// The version just below the first pre-release of release x, if any.
std::optional<Version> belowFirstPrerelease(const Version &x) {
  constexpr uint64_t kMax = UINT64_MAX;
  Version out;
  if (x.patch > 0) {
    out.major = x.major;
    out.minor = x.minor;
    out.patch = x.patch - 1;
  } else if (x.minor > 0) {
    out.major = x.major;
    out.minor = x.minor - 1;
    out.patch = kMax;
  } else if (x.major > 0) {
    out.major = x.major - 1;
    out.minor = kMax;
    out.patch = kMax;
  } else {
    return std::nullopt;
  }
  return out;
}

/// Gives every unpublished pre-release sliver of a published release to the
/// set when the set holds both of its neighbours, and takes it away
/// otherwise. Changes no published version.
void Solver::normalize(uint32_t id, VersionSet &set) {
  if (id == 0)
    return;
  Package &p = packages_[id];
  if (!p.slivers) {
    p.slivers.emplace();
    for (uint32_t i = 0; i < p.size; ++i) {
      const Version &x = p.versions[i].version;
      if (x.isPrerelease())
        continue;
      Version first = justBelow(x);
      if (i > 0 && compare(p.versions[i - 1].version, first) >= 0)
        continue; // a pre-release of x is published
      Sliver s;
      s.release = x;
      s.release.build.clear();
      s.below = belowFirstPrerelease(x);
      s.set = VersionSet::atLeast(first).intersect(VersionSet::lessThan(x));
      s.first = std::move(first);
      p.slivers->push_back(std::move(s));
    }
  }
  for (const Sliver &s : *p.slivers) {
    bool want = set.contains(s.release) && s.below && set.contains(*s.below);
    if (want != set.contains(s.first))
      set = want ? set.unionWith(s.set) : set.difference(s.set);
  }
}

uint32_t Solver::add(Incompat incompat) {
  incompats_.push_back(std::move(incompat));
  return uint32_t(incompats_.size() - 1);
}

uint32_t Solver::registerIncompat(uint32_t id) {
  const std::vector<Term> &terms = incompats_[id].terms;
  for (uint32_t i = 0; i < terms.size(); ++i)
    packages_[terms[i].pkg].uses.push_back(
        Use{id, i, terms[i].positive, terms[i].bits});
  return id;
}

/// A derived incompatibility; with ranges if `terms` have them (`shown`),
/// otherwise they are worked out when an explanation needs them.
uint32_t Solver::addDerived(std::vector<ShownTerm> terms, uint32_t cause1,
                            uint32_t cause2, uint32_t pivot, bool shown) {
  Incompat out;
  out.kind = Kind::Derived;
  for (ShownTerm &t : terms) {
    out.terms.push_back(std::move(t.term));
    if (shown)
      out.sets.push_back(std::move(t.set));
  }
  out.cause1 = int32_t(cause1);
  out.cause2 = int32_t(cause2);
  out.pivot = pivot;
  return add(std::move(out));
}

uint32_t Solver::addNoVersions(uint32_t pkg, VersionSet range) {
  Incompat out;
  out.kind = Kind::NoVersions;
  out.pkg = pkg;
  out.terms.push_back(Term{pkg, true, Bits(packages_[pkg].size)});
  out.sets.push_back(range);
  out.range = std::move(range);
  return add(std::move(out));
}

/// Turns "pkg's versions lo..hi depend on dep c" into the incompatibility
/// the solver uses and registers it. Returns its id, or kVacuous when it
/// forbids nothing (a self-dependency every version in the run meets).
Expected<int32_t> Solver::addDependency(uint32_t pkg, uint32_t lo, uint32_t hi,
                                        uint32_t dep, const Constraint &c) {
  if (Status s = load(dep); !s)
    return Unexpected(s.error());
  Bits wanted = matching(dep, c);
  Bits run = Bits::range(packages_[pkg].size, lo, hi);

  Incompat fact;
  fact.kind = Kind::Dependency;
  fact.pkg = pkg;
  fact.lo = lo;
  fact.hi = hi;
  fact.dep = dep;
  fact.constraint = &c;
  if (pkg == dep) {
    Bits left = run.minus(wanted);
    if (left.none())
      return kVacuous;
    fact.terms.push_back(Term{pkg, true, std::move(left)});
    return int32_t(registerIncompat(add(std::move(fact))));
  }
  bool satisfiable = !wanted.none();
  fact.terms.push_back(Term{pkg, true, run});
  fact.terms.push_back(Term{dep, false, std::move(wanted)});
  if (satisfiable)
    return int32_t(registerIncompat(add(std::move(fact))));

  // No published version of dep meets c: with that fact, the run itself is
  // forbidden.
  uint32_t factId = add(std::move(fact));
  uint32_t none;
  if (packages_[dep].exists) {
    none = addNoVersions(dep, c.set());
  } else {
    Incompat missing;
    missing.kind = Kind::NotFound;
    missing.pkg = dep;
    missing.terms.push_back(Term{dep, true, Bits(0)});
    missing.sets.push_back(VersionSet::any());
    none = add(std::move(missing));
  }
  std::vector<ShownTerm> terms;
  terms.push_back(ShownTerm{Term{pkg, true, std::move(run)}, {}});
  return int32_t(
      registerIncompat(addDerived(std::move(terms), factId, none, dep, false)));
}

/// Registers the incompatibility that forbids unusable version v of pkg and
/// the adjacent versions unusable for the same reason, once.
void Solver::unusableIncompat(uint32_t pkg, uint32_t v) {
  Package &p = packages_[pkg];
  if (p.info[v].unusableIncompat >= 0)
    return;
  auto same = [&](uint32_t i) {
    const VersionInfo &a = p.info[i], &b = p.info[v];
    if (a.unusable != b.unusable)
      return false;
    if (a.unusable == Unusable::NoBuild)
      return a.platform == b.platform;
    if (a.unusable == Unusable::Iree)
      return p.versions[i].requiresIree->text() ==
             p.versions[v].requiresIree->text();
    return true;
  };
  uint32_t lo = v, hi = v;
  while (lo > 0 && same(lo - 1))
    --lo;
  while (hi + 1 < p.size && same(hi + 1))
    ++hi;

  Incompat out;
  out.pkg = pkg;
  out.lo = lo;
  out.hi = hi;
  switch (p.info[v].unusable) {
  case Unusable::Iree:
    out.kind = Kind::Iree;
    out.constraint = &*p.versions[v].requiresIree;
    break;
  case Unusable::NoBuild:
    out.kind = Kind::NoBuild;
    out.platform = p.info[v].platform;
    break;
  default:
    out.kind = Kind::Yanked;
    break;
  }
  out.terms.push_back(Term{pkg, true, Bits::range(p.size, lo, hi)});
  uint32_t id = registerIncompat(add(std::move(out)));
  for (uint32_t i = lo; i <= hi; ++i)
    p.info[i].unusableIncompat = int32_t(id);
}

/// Fills in the ranges of an external incompatibility.
void Solver::ensureSets(uint32_t id) {
  Incompat &in = incompats_[id];
  if (!in.sets.empty() || in.kind == Kind::Derived)
    return;
  VersionSet run = runSet(in.pkg, in.lo, in.hi);
  if (in.kind != Kind::Dependency) {
    in.sets.push_back(std::move(run));
  } else if (in.terms.size() == 1) { // a self-dependency
    in.sets.push_back(run.difference(in.constraint->set()));
    normalize(in.pkg, in.sets[0]);
  } else {
    in.sets.push_back(std::move(run));
    in.sets.push_back(in.constraint->set());
  }
}

bool Solver::isTerminal(const Incompat &in) const {
  return in.terms.empty() ||
         (in.terms.size() == 1 && in.terms[0].pkg == 0 && in.terms[0].positive);
}

//===----------------------------------------------------------------------===//
// Partial solution
//===----------------------------------------------------------------------===//

Relation Solver::relation(const Term &t) const {
  const State &s = states_[t.pkg];
  return relate(s.last >= 0, s.positive, s.acc, t.positive, t.bits);
}

void Solver::addAssignment(uint32_t pkg, bool positive, Bits bits,
                           int32_t cause) {
  State &st = states_[pkg];
  if (st.last >= 0) {
    intersectBits(st.positive, st.acc, positive, bits);
  } else {
    st.positive = positive;
    st.acc = bits;
  }
  if (cause < 0) {
    ++level_;
    st.decision = st.acc.highest();
  }
  assignments_.push_back(Assignment{pkg, positive, std::move(bits), st.positive,
                                    st.acc, level_, cause, st.last});
  st.last = int32_t(assignments_.size() - 1);
  enqueue(pkg);
  pushCandidate(pkg);
}

void Solver::backtrack(uint32_t level) {
  std::vector<uint32_t> &touched = touched_;
  touched.clear();
  while (assignments_.back().level > level) {
    const Assignment &a = assignments_.back();
    State &st = states_[a.pkg];
    st.last = a.prev;
    if (a.cause < 0)
      st.decision = -1;
    if (a.prev >= 0) {
      const Assignment &prev = assignments_[size_t(a.prev)];
      st.positive = prev.accPositive;
      st.acc = prev.acc;
    }
    touched.push_back(a.pkg);
    assignments_.pop_back();
  }
  level_ = level;
  for (uint32_t pkg : touched)
    pushCandidate(pkg);
}

/// Derives from incompatibility id if the partial solution almost satisfies
/// it; queues its packages if it satisfies it.
void Solver::deriveFrom(uint32_t id) {
  const Incompat &in = incompats_[id];
  int32_t open = -1;
  for (size_t i = 0; i < in.terms.size(); ++i) {
    Relation r = relation(in.terms[i]);
    if (r == Relation::Contradicted)
      return;
    if (r == Relation::Inconclusive) {
      if (open >= 0)
        return;
      open = int32_t(i);
    }
  }
  if (open < 0) {
    for (const Term &t : in.terms)
      enqueue(t.pkg);
    return;
  }
  const Term &t = in.terms[size_t(open)];
  addAssignment(t.pkg, !t.positive, t.bits, int32_t(id));
}

void Solver::enqueue(uint32_t pkg) {
  State &st = states_[pkg];
  if (!st.queued) {
    st.queued = true;
    queue_.push_back(pkg);
  }
}

/// Records pkg as a package to decide if it is one: selected (a positive
/// term), not decided, not the root.
void Solver::pushCandidate(uint32_t pkg) {
  State &st = states_[pkg];
  if (pkg == 0 || st.decision >= 0 || st.last < 0 || !st.positive)
    return;
  uint32_t count = st.acc.countAnd(packages_[pkg].usable);
  if (st.heapCount == int32_t(count))
    return; // already there
  st.heapCount = int32_t(count);
  candidates_.emplace(count, pkg);
}

/// The package to decide next: fewest usable candidates left, then first
/// seen.
std::optional<uint32_t> Solver::pick() {
  while (!candidates_.empty()) {
    auto [count, pkg] = candidates_.top();
    State &st = states_[pkg];
    if (st.decision < 0 && st.last >= 0 && st.positive &&
        st.acc.countAnd(packages_[pkg].usable) == count)
      return pkg;
    if (st.heapCount == int32_t(count))
      st.heapCount = -1;
    candidates_.pop();
  }
  return std::nullopt;
}

/// The earliest assignment after which t is satisfied; t must be.
int32_t Solver::earliestSatisfier(const Term &t) const {
  int32_t found = -1;
  for (int32_t i = states_[t.pkg].last; i >= 0;
       i = assignments_[size_t(i)].prev) {
    const Assignment &a = assignments_[size_t(i)];
    if (relate(true, a.accPositive, a.acc, t.positive, t.bits) !=
        Relation::Satisfied)
      break;
    found = i;
  }
  return found;
}

//===----------------------------------------------------------------------===//
// Unit propagation, conflict resolution, decision making
//===----------------------------------------------------------------------===//

/// Unit propagation over the queued packages. False when version solving
/// failed (terminal_ is then the root cause).
bool Solver::propagate() {
  while (!queue_.empty()) {
    uint32_t pkg = queue_.front();
    queue_.pop_front();
    states_[pkg].queued = false;
    // Newest first: learned incompatibilities are the most general.
    const State &st = states_[pkg];
    for (size_t k = packages_[pkg].uses.size(); k-- > 0;) {
      const Use &use = packages_[pkg].uses[k];
      // The term about pkg first: it is the one that changed.
      Relation own =
          relate(st.last >= 0, st.positive, st.acc, use.positive, use.bits);
      if (own == Relation::Contradicted)
        continue;
      uint32_t id = use.id, term = use.term;
      const Incompat &in = incompats_[id];
      int32_t open = own == Relation::Inconclusive ? int32_t(term) : -1;
      bool skip = false;
      for (uint32_t i = 0; i < in.terms.size() && !skip; ++i) {
        if (i == term)
          continue;
        switch (relation(in.terms[i])) {
        case Relation::Satisfied:
          break;
        case Relation::Contradicted:
          skip = true;
          break;
        case Relation::Inconclusive:
          if (open >= 0)
            skip = true;
          open = int32_t(i);
          break;
        }
      }
      if (skip)
        continue;
      if (open >= 0) {
        const Term &t = in.terms[size_t(open)];
        addAssignment(t.pkg, !t.positive, t.bits, int32_t(id));
        continue;
      }

      // A conflict: learn its root cause, backjump, and go on from there.
      std::optional<uint32_t> learned = resolveConflict(id);
      if (!learned)
        return false;
      for (uint32_t q : queue_)
        states_[q].queued = false;
      queue_.clear();
      deriveFrom(*learned);
      break;
    }
  }
  return true;
}

/// Conflict resolution for an incompatibility the partial solution
/// satisfies. Returns the learned incompatibility after backjumping, or
/// nullopt when version solving failed (terminal_ set).
std::optional<uint32_t> Solver::resolveConflict(uint32_t id) {
  uint32_t current = id;
  std::vector<int32_t> earliest;
  for (;;) {
    const Incompat &in = incompats_[current];
    if (isTerminal(in)) {
      terminal_ = current;
      return std::nullopt;
    }
    earliest.assign(in.terms.size(), -1);
    int32_t satisfier = -1;
    size_t satisfied = 0;
    for (size_t i = 0; i < in.terms.size(); ++i) {
      earliest[i] = earliestSatisfier(in.terms[i]);
      if (earliest[i] > satisfier) {
        satisfier = earliest[i];
        satisfied = i;
      }
    }
    if (satisfier < 0) { // cannot happen: only terminal ones need nothing
      terminal_ = current;
      return std::nullopt;
    }
    const Assignment &s = assignments_[size_t(satisfier)];
    const Term &term = in.terms[satisfied];

    // The previous satisfier: the latest assignment, before the satisfier,
    // that the other terms or (with the satisfier) this term still need.
    int32_t previous = -1;
    for (size_t i = 0; i < in.terms.size(); ++i)
      if (i != satisfied)
        previous = std::max(previous, earliest[i]);
    if (relate(true, s.positive, s.bits, term.positive, term.bits) !=
        Relation::Satisfied) {
      int32_t needed = -1;
      for (int32_t j = s.prev; j >= 0; j = assignments_[size_t(j)].prev) {
        const Assignment &a = assignments_[size_t(j)];
        bool pos = a.accPositive;
        Bits acc = a.acc;
        intersectBits(pos, acc, s.positive, s.bits);
        if (relate(true, pos, acc, term.positive, term.bits) !=
            Relation::Satisfied)
          break;
        needed = j;
      }
      previous = std::max(previous, needed);
    }
    uint32_t previousLevel =
        previous >= 0 ? assignments_[size_t(previous)].level : 0;

    if (s.cause < 0 || previousLevel != s.level) {
      if (current != id)
        registerIncompat(current);
      backtrack(s.level - previousLevel > kMaxBackjump ? s.level - 1
                                                       : previousLevel);
      return current;
    }
    current = priorCause(current, uint32_t(s.cause), s.pkg);
  }
}

/// The terms of the resolvent of incompatibilities a and b on package
/// `pivot`: {q, r, t1 ∪ t2} for {t1, q} and {t2, r}, without the pivot
/// term when it allows everything. With `shown`, a and b must have their
/// ranges and the result has them too; `united` receives t1 ∪ t2.
std::vector<ShownTerm> Solver::resolvent(uint32_t a, uint32_t b, uint32_t pivot,
                                         bool shown,
                                         std::optional<ShownTerm> *united) {
  std::vector<ShownTerm> terms;
  std::optional<ShownTerm> mine, theirs;
  for (uint32_t from : {a, b}) {
    const Incompat &in = incompats_[from];
    for (size_t i = 0; i < in.terms.size(); ++i) {
      ShownTerm t{in.terms[i], shown ? in.sets[i] : VersionSet()};
      if (t.term.pkg == pivot) {
        (from == a ? mine : theirs) = std::move(t);
        continue;
      }
      auto same = std::find_if(terms.begin(), terms.end(), [&](auto &e) {
        return e.term.pkg == t.term.pkg;
      });
      if (same != terms.end())
        *same = intersectTerms(*same, t, shown);
      else
        terms.push_back(std::move(t));
    }
  }
  ShownTerm both = unionTerms(*mine, *theirs, shown);
  if (shown) {
    for (ShownTerm &t : terms)
      normalize(t.term.pkg, t.set);
    normalize(pivot, both.set);
  }
  if (both.term.positive || !both.term.bits.none())
    terms.push_back(both);
  if (united)
    *united = std::move(both);
  return terms;
}

/// Prior cause of `id` through the satisfier's cause, on package pkg.
uint32_t Solver::priorCause(uint32_t id, uint32_t cause, uint32_t pkg) {
  return addDerived(resolvent(id, cause, pkg, false, nullptr), id, cause, pkg,
                    false);
}

/// Works out the ranges of derived incompatibility id, whose causes have
/// theirs. Where the two causes' ranges for the pivot leave out versions
/// that no published version is in, the step becomes two: the resolvent
/// keeping that range, then "no versions of X match" it.
void Solver::showDerived(uint32_t id) {
  uint32_t c1 = uint32_t(incompats_[id].cause1);
  uint32_t c2 = uint32_t(incompats_[id].cause2);
  uint32_t pivot = incompats_[id].pivot;
  std::optional<ShownTerm> both;
  std::vector<ShownTerm> terms = resolvent(c1, c2, pivot, true, &both);
  if (!both->term.positive && both->term.bits.none() && !both->set.isEmpty()) {
    std::vector<ShownTerm> withGap = terms;
    withGap.push_back(*both);
    uint32_t step = addDerived(std::move(withGap), c1, c2, pivot, true);
    uint32_t none = addNoVersions(pivot, both->set);
    incompats_[id].cause1 = int32_t(step);
    incompats_[id].cause2 = int32_t(none);
  }
  Incompat &in = incompats_[id];
  in.sets.clear();
  for (size_t i = 0; i < in.terms.size(); ++i)
    in.sets.push_back(i < terms.size() ? terms[i].set : VersionSet::any());
}

/// Whether deciding pkg = v would satisfy incompatibility id.
bool Solver::wouldConflict(uint32_t id, uint32_t pkg, uint32_t v) const {
  for (const Term &t : incompats_[id].terms) {
    if (t.pkg == pkg) {
      if (t.bits.test(v) != t.positive)
        return false;
    } else if (relation(t) != Relation::Satisfied) {
      return false;
    }
  }
  return true;
}

/// Decision making for pkg: chooses a version, adds the facts about it and
/// decides it unless they would conflict at once. Queues pkg for
/// propagation either way.
Status Solver::decide(uint32_t pkg) {
  Package &p = packages_[pkg];
  Bits allowed = states_[pkg].acc;
  Bits usable = allowed & p.usable;
  if (usable.none()) {
    // Only unusable versions are left: state why the newest is.
    unusableIncompat(pkg, uint32_t(allowed.highest()));
    enqueue(pkg);
    return ok();
  }
  uint32_t v = p.preferred >= 0 && usable.test(uint32_t(p.preferred))
                   ? uint32_t(p.preferred)
                   : uint32_t(usable.highest());

  auto depIncompats = [&](uint32_t i) -> std::vector<int32_t> & {
    std::vector<int32_t> &out = p.info[i].depIncompat;
    if (out.empty())
      out.assign(p.versions[i].dependencies.size(), kUnset);
    return out;
  };
  // Those read ahead after load() are not named again; one left is read
  // at once below, with nothing to gain by reading it ahead.
  hint(p.versions[v].dependencies, 2);
  bool conflict = false;
  size_t k = 0;
  for (const Dependency &d : p.versions[v].dependencies) {
    const std::string &name = d.name;
    const Constraint &c = *d.constraint;
    int32_t id = depIncompats(v)[k];
    if (id == kUnset) {
      // The run of adjacent versions with the same dependency, and where
      // each has it in its list (neighbours mostly list the same ones).
      std::vector<size_t> at(p.size);
      auto sameDep = [&](uint32_t i) {
        const auto &deps = p.versions[i].dependencies;
        const Dependency *it = nullptr;
        if (k < deps.size() && deps[k].name == name)
          it = &deps[k];
        else
          it = p.versions[i].dependency(name);
        if (!it || (it->constraint != d.constraint &&
                    it->constraint->text() != c.text()))
          return false;
        at[i] = size_t(it - deps.data());
        return true;
      };
      at[v] = k;
      uint32_t lo = v, hi = v;
      while (lo > 0 && sameDep(lo - 1))
        --lo;
      while (hi + 1 < p.size && sameDep(hi + 1))
        ++hi;
      Expected<int32_t> made = addDependency(pkg, lo, hi, intern(name), c);
      if (!made)
        return Unexpected(made.error());
      id = *made;
      for (uint32_t i = lo; i <= hi; ++i)
        depIncompats(i)[at[i]] = id;
    }
    ++k;
    if (id >= 0 && !conflict && wouldConflict(uint32_t(id), pkg, v))
      conflict = true;
  }
  if (!conflict)
    addAssignment(pkg, true, Bits::range(p.size, v, v), -1);
  enqueue(pkg);
  return ok();
}

Resolution Solver::solution() const {
  Resolution out;
  for (uint32_t id = 1; id < packages_.size(); ++id) {
    int32_t v = states_[id].decision;
    if (v < 0)
      continue;
    const Package &p = packages_[id];
    const CandidateVersion &cv = p.versions[size_t(v)];
    out.versions.emplace(p.name, cv.version);
    std::vector<std::string> &deps = out.dependencies[p.name];
    for (const Dependency &dep : cv.dependencies)
      deps.push_back(dep.name);
  }
  return out;
}

Expected<Resolution> Solver::run() {
  Package &root = packages_.emplace_back();
  root.name = request_.rootName;
  root.loaded = true;
  root.size = 1;
  root.usable = Bits::all(1);
  states_.emplace_back();
  // The root's is the first decision, at level 0 (the first decision level
  // that can be backtracked is 1).
  addAssignment(0, true, Bits::all(1), -1);
  level_ = 0;
  assignments_[0].level = 0;

  {
    std::vector<Dependency> roots;
    for (const auto &[name, constraint] : request_.roots)
      roots.push_back(Dependency{name, nullptr});
    hint(roots, 2);
  }
  for (const auto &[name, constraint] : request_.roots) {
    Expected<int32_t> id = addDependency(0, 0, 0, intern(name), constraint);
    if (!id)
      return Unexpected(id.error());
    if (*id >= 0 && isTerminal(incompats_[size_t(*id)]))
      return conflict(uint32_t(*id));
  }
  for (;;) {
    if (!propagate())
      return conflict(terminal_);
    std::optional<uint32_t> next = pick();
    if (!next)
      return solution();
    if (Status s = decide(*next); !s)
      return Unexpected(s.error());
  }
}

//===----------------------------------------------------------------------===//
// Explanations
//===----------------------------------------------------------------------===//

std::string Solver::termText(const Term &t, const VersionSet &set) const {
  if (t.pkg == 0)
    return request_.rootName;
  const std::string &name = packages_[t.pkg].name;
  return set.isAny() ? name : name + " " + set.str();
}

/// "X >=1.0.0, <2.0.0", or for all versions "every version of X" (or "X"
/// when !everyVersion).
std::string Solver::rangeText(uint32_t pkg, uint32_t lo, uint32_t hi,
                              bool everyVersion) const {
  if (pkg == 0)
    return request_.rootName;
  const std::string &name = packages_[pkg].name;
  VersionSet set = runSet(pkg, lo, hi);
  if (set.isAny())
    return everyVersion ? "every version of " + name : name;
  return name + " " + set.str();
}

/// The versions an unusable-version fact is about: the version itself when
/// it is one.
std::string Solver::unusableText(const Incompat &in) const {
  if (in.lo == in.hi)
    return packages_[in.pkg].name + " " +
           packages_[in.pkg].versions[in.lo].version.str();
  return rangeText(in.pkg, in.lo, in.hi, true);
}

Unexpected Solver::conflict(uint32_t id) {
  ireeBlamed_.clear();
  std::string text = explain(id);
  if (ireeBlamed_.empty())
    return makeError(ErrorCode::Conflict, text);
  std::string names;
  for (const std::string &n : ireeBlamed_)
    names += (names.empty() ? "" : ", ") + n;
  return makeError(
      ErrorCode::Conflict, text, {},
      "the IREE versions a package works with are \"requires.iree\" in its "
      "own manifest (ireeplugin.json of " +
          names +
          "), not in plugins.json: use an IREE those versions accept, or "
          "versions of " +
          names + " made for IREE " + request_.ireeVersion->str());
}

/// One incompatibility as a clause.
std::string Solver::describe(uint32_t id) const {
  const Incompat &in = incompats_[id];
  const std::string &name = packages_[in.pkg].name;
  switch (in.kind) {
  case Kind::Dependency: {
    const Package &dep = packages_[in.dep];
    const VersionSet &wanted = in.constraint->set();
    return rangeText(in.pkg, in.lo, in.hi, true) + " depends on " +
           (wanted.isAny() ? dep.name : dep.name + " " + wanted.str());
  }
  case Kind::NoVersions:
    if (in.range.isAny())
      return name + " has no versions";
    return "no versions of " + name + " match " + in.range.str();
  case Kind::NotFound:
    return name + " does not exist";
  case Kind::Yanked:
    return unusableText(in) + " is yanked";
  case Kind::Iree:
    ireeBlamed_.insert(name);
    return unusableText(in) + " requires IREE " + in.constraint->str() +
           ", but IREE " + request_.ireeVersion->str() + " is in use";
  case Kind::NoBuild:
    return unusableText(in) + " has no build for " +
           request_.platforms[in.platform].str();
  case Kind::Derived:
    break;
  }

  std::vector<std::string> positive, negative;
  bool root = false;
  for (size_t i = 0; i < in.terms.size(); ++i) {
    const Term &t = in.terms[i];
    if (t.pkg == 0 && t.positive)
      root = true;
    else
      (t.positive ? positive : negative).push_back(termText(t, in.sets[i]));
  }
  if (positive.empty() && negative.empty())
    return "version solving failed";
  if (root && positive.empty())
    return request_.rootName + " requires " + joinList(negative, " or ");
  if (negative.empty())
    return positive.size() == 1
               ? positive[0] + " is forbidden"
               : joinList(positive, " and ") + " are incompatible";
  if (positive.empty())
    return joinList(negative, " or ") + " is required";
  if (positive.size() == 1)
    return positive[0] + " requires " + joinList(negative, " or ");
  return joinList(positive, " and ") + " together require " +
         joinList(negative, " or ");
}

/// The explanation of terminal's derivation graph, as described in pub's
/// solver documentation: depth first, one line per derived
/// incompatibility, numbering only lines referred to again, collapsing
/// linear chains.
std::string Solver::explain(uint32_t terminal) {
  auto derived = [&](int32_t id) {
    return incompats_[size_t(id)].kind == Kind::Derived;
  };
  // Two facts joined by "and": dependencies first, so that a fact with a
  // comma of its own ("..., but IREE 3.13.0 is in use") ends the clause.
  auto both = [&](uint32_t a, uint32_t b) {
    if (incompats_[a].kind != Kind::Dependency &&
        incompats_[b].kind == Kind::Dependency)
      std::swap(a, b);
    return describe(a) + " and " + describe(b);
  };
  if (!derived(int32_t(terminal))) {
    ensureSets(terminal);
    return describe(terminal) + ".";
  }
  // Ranges for every incompatibility of the derivation, causes first.
  {
    std::vector<std::pair<uint32_t, bool>> stack{{terminal, false}};
    std::vector<bool> done(incompats_.size());
    while (!stack.empty()) {
      auto [id, expanded] = stack.back();
      stack.pop_back();
      done.resize(incompats_.size());
      if (done[id])
        continue;
      const Incompat &in = incompats_[id];
      if (in.kind != Kind::Derived) {
        ensureSets(id);
        done[id] = true;
      } else if (expanded) {
        showDerived(id);
        done[id] = true;
      } else {
        stack.push_back({id, true});
        stack.push_back({uint32_t(in.cause2), false});
        stack.push_back({uint32_t(in.cause1), false});
      }
    }
  }
  // How many derived incompatibilities each one causes.
  std::unordered_map<uint32_t, int> uses;
  {
    std::vector<uint32_t> stack{terminal};
    std::unordered_map<uint32_t, bool> seen{{terminal, true}};
    while (!stack.empty()) {
      const Incompat &in = incompats_[stack.back()];
      stack.pop_back();
      if (in.kind != Kind::Derived)
        continue;
      for (int32_t c : {in.cause1, in.cause2}) {
        ++uses[uint32_t(c)];
        if (!seen[uint32_t(c)]) {
          seen[uint32_t(c)] = true;
          stack.push_back(uint32_t(c));
        }
      }
    }
  }

  struct Line {
    std::string text;
    int number = 0;
  };
  std::vector<Line> lines;
  std::unordered_map<uint32_t, int> numbers;
  int nextNumber = 1;
  auto numbered = [&](uint32_t id) {
    return describe(id) + " (" + std::to_string(numbers.at(id)) + ")";
  };
  auto number = [&](uint32_t id) {
    if (!lines.back().number)
      lines.back().number = nextNumber++;
    numbers[id] = lines.back().number;
  };
  auto write = [&](std::string text) {
    lines.push_back(Line{std::move(text) + ".", 0});
  };

  std::function<void(uint32_t)> visit = [&](uint32_t id) {
    const Incompat &in = incompats_[id];
    uint32_t c1 = uint32_t(in.cause1), c2 = uint32_t(in.cause2);
    std::string conclusion = describe(id);
    if (derived(in.cause1) && derived(in.cause2)) {
      bool n1 = numbers.count(c1), n2 = numbers.count(c2);
      if (n1 && n2) {
        write("Because " + numbered(c1) + " and " + numbered(c2) + ", " +
              conclusion);
      } else if (n1 || n2) {
        uint32_t known = n1 ? c1 : c2, other = n1 ? c2 : c1;
        visit(other);
        write("And because " + numbered(known) + ", " + conclusion);
      } else {
        auto simple = [&](uint32_t c) {
          const Incompat &x = incompats_[c];
          return !derived(x.cause1) && !derived(x.cause2);
        };
        if (simple(c1) || simple(c2)) {
          uint32_t first = simple(c1) ? c2 : c1;
          uint32_t second = first == c1 ? c2 : c1;
          visit(first);
          visit(second);
          write("Thus, " + conclusion);
        } else {
          visit(c1);
          number(c1);
          lines.push_back(Line{});
          visit(c2);
          write("And because " + numbered(c1) + ", " + conclusion);
        }
      }
    } else if (derived(in.cause1) || derived(in.cause2)) {
      uint32_t inner = derived(in.cause1) ? c1 : c2;
      uint32_t external = inner == c1 ? c2 : c1;
      const Incompat &d = incompats_[inner];
      if (numbers.count(inner)) {
        write("Because " + describe(external) + " and " + numbered(inner) +
              ", " + conclusion);
      } else if (uses[inner] < 2 && derived(d.cause1) != derived(d.cause2) &&
                 !numbers.count(
                     uint32_t(derived(d.cause1) ? d.cause1 : d.cause2))) {
        uint32_t prior = uint32_t(derived(d.cause1) ? d.cause1 : d.cause2);
        uint32_t priorExternal =
            uint32_t(prior == uint32_t(d.cause1) ? d.cause2 : d.cause1);
        visit(prior);
        write("And because " + both(priorExternal, external) + ", " +
              conclusion);
      } else {
        visit(inner);
        write("And because " + describe(external) + ", " + conclusion);
      }
    } else {
      write("Because " + both(c1, c2) + ", " + conclusion);
    }
    if (uses[id] >= 2)
      number(id);
  };
  visit(terminal);

  size_t width = 0;
  for (const Line &l : lines)
    if (l.number)
      width = std::max(width, std::to_string(l.number).size() + 3);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i)
      out += '\n';
    const Line &l = lines[i];
    if (l.text.empty())
      continue;
    std::string prefix =
        l.number ? "(" + std::to_string(l.number) + ") " : std::string();
    prefix.resize(width, ' ');
    out += prefix + l.text;
  }
  return out;
}

} // namespace

void CandidateVersion::setRequirements(
    const std::map<std::string, Constraint> &deps,
    const std::optional<Constraint> &iree) {
  dependencies.clear();
  dependencies.reserve(deps.size());
  for (const auto &[name, c] : deps) // std::map: sorted, unique
    dependencies.push_back({name, std::make_shared<const Constraint>(c)});
  requiresIree = iree ? std::make_shared<const Constraint>(*iree) : nullptr;
}

const Dependency *CandidateVersion::dependency(std::string_view name) const {
  auto it = std::lower_bound(
      dependencies.begin(), dependencies.end(), name,
      [](const Dependency &d, std::string_view n) { return d.name < n; });
  return it != dependencies.end() && it->name == name ? &*it : nullptr;
}

Expected<Resolution> resolve(const ResolveRequest &request,
                             PackageSource &source) {
  auto solver = std::make_unique<Solver>(request, source);
  Expected<Resolution> out = solver->run();
  discard(std::move(solver));
  return out;
}

} // namespace ireepkg
