//! What each subcommand's help ends with: notes where it needs them, then
//! two to four examples, each a command line that `tests/cli/usability.rs`
//! parses (so an example never names a flag that is gone).

/// `memprof inspect`.
pub const INSPECT: &str = "\
A leaf is one figure OMMX's leaf-only visitor reports: a path with bytes of its own, typically \
one field of one entity (a variable's DecisionVariable.id, 8 B); only leaves carry bytes. A \
folded line is the sum of one path's leaves, the leaves columns count them, a node's inclusive \
bytes are its leaves' and those below it, its own bytes its leaves' alone.

A baseline saved with --format json (as `memprof check --update-baseline` writes it) is shown \
as the profile it holds, in any format.

Examples:
  memprof inspect problem.ommx
  memprof inspect problem.ommx --format json -o baseline.json
  memprof inspect baseline.json --format table --top 10
  memprof inspect 'runs/*.ommx' --group-by name";

/// `memprof flamegraph`.
pub const FLAMEGRAPH: &str = "\
Two ways to turn the graph: --inverted draws it upside down (an icicle graph: the root at the \
top, every path still running from the root to its leaf); --reverse turns every path around \
(leaves first: the frames holding bytes at the root, their callers above them), so that a kind \
of data spread over many places (the terms of every function) is one wide frame. They combine.

Examples:
  memprof flamegraph problem.ommx -o problem.svg
  memprof flamegraph problem.ommx --reverse -o leaves.svg
  memprof flamegraph problem.ommx --view wire -o wire.svg
  memprof inspect problem.ommx --format folded | memprof flamegraph -o problem.svg";

/// `memprof report`.
pub const REPORT: &str = concat!(
    "The page works offline: its data and the script that draws it (d3 and d3-flame-graph, their \
licences at its foot) are inside the file. It shows the header facts, an interactive \
flamegraph of the logical bytes (click to zoom, search, switch to the wire bytes), the largest \
entities, the families, the distributions per kind and the advice.\n\n\
With FILE2 the page compares FILE (old: an instance or a baseline JSON saved by `memprof \
inspect --format json`) with FILE2 (new: an instance): the flamegraph colours growth red and \
shrinkage blue, a table lists the changed paths, and the other tables describe FILE2.",
    "\n\n\
Examples:
  memprof report problem.ommx -o report.html
  memprof report baseline.json problem.ommx -o diff.html
  memprof report problem.ommx --group-by name -o report.html"
);

/// `memprof ls`.
pub const LS: &str = "\
Examples:
  memprof ls problem.ommx
  memprof ls problem.ommx --format json";

/// `memprof diff`.
pub const DIFF: &str = concat!(
    "OLD and NEW are each an instance (.ommx archive, OCI directory, raw bytes, '-' for stdin) \
or a baseline saved with `memprof inspect FILE --format json`; the kind is detected from the \
content.\n\n\
--flamegraph out.svg writes two differential flamegraphs (red grew, blue shrank): out.svg with \
frames as wide as the new bytes (added paths show there) and out.old.svg, the negated graph with \
frames as wide as the old bytes (removed paths show there).",
    "\n\n\
Examples:
  memprof diff baseline.json problem.ommx
  memprof diff old.ommx new.ommx --format markdown -o comment.md
  memprof diff problem.ommx --accounting 2.9,3.0
  memprof diff old.ommx new.ommx --flamegraph growth.svg"
);

/// `memprof check`.
pub const CHECK: &str = concat!(
    "Exit status: 0 every budget holds, 1 at least one is exceeded, 2 any error (then no verdict).\n\n\
Each FILE is an instance or a baseline JSON; a FILE argument with *, ? or [ that names no \
existing file is expanded as a glob. With --baseline and no --budget the rule is: the total may \
not grow at all. --baseline DIR compares each FILE with DIR/<file name>.json.\n\n\
When GITHUB_STEP_SUMMARY is set, the markdown report is appended to that file.",
    "\n\n\
Examples:
  memprof check problem.ommx --baseline baseline.json
  memprof check 'out/*.ommx' --baseline baselines/ --budget budget.yaml --format junit -o junit.xml
  memprof check problem.ommx --baseline baseline.json --update-baseline"
);

/// `memprof top`.
pub const TOP: &str = "\
Examples:
  memprof top problem.ommx
  memprof top problem.ommx --kind constraint -n 20
  memprof top problem.ommx --format json -o top.json";

/// `memprof explain`.
pub const EXPLAIN: &str = "\
Examples:
  memprof explain problem.ommx total
  memprof explain problem.ommx 'Instance.constraints;Constraint.function'
  memprof explain problem.ommx --group-by name 'Instance.decision_variables;x'";

/// `memprof stats`.
pub const STATS: &str = "\
Examples:
  memprof stats problem.ommx
  memprof stats problem.ommx --kind variable --format yaml";

/// `memprof advise`.
pub const ADVISE: &str = "\
Examples:
  memprof advise problem.ommx
  memprof advise problem.ommx --min-severity medium
  memprof advise 'runs/*.ommx' --format json -o advice.json";

/// `memprof completions`.
pub const COMPLETIONS: &str = "\
Examples:
  memprof completions bash > ~/.local/share/bash-completion/completions/memprof
  memprof completions zsh > ~/.zfunc/_memprof
  memprof completions fish > ~/.config/fish/completions/memprof.fish";

/// `memprof man`.
pub const MAN: &str = "\
Examples:
  memprof man > memprof.1
  memprof man check > memprof-check.1";
