"""The ``memprof`` command of the wheel: the Rust CLI's entry function,
called in this process with ``sys.argv``; its exit status becomes ours."""

import signal
import sys

from . import _native


def main() -> None:
    # Python turns Ctrl-C into KeyboardInterrupt, which native code running
    # without the GIL never sees: restore the default, as a native binary has.
    # (SIGPIPE stays ignored, as Rust programs ignore it: a closed pipe is an
    # error memprof ends quietly with status 0.)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_native.run_cli(sys.argv))


if __name__ == "__main__":
    main()
