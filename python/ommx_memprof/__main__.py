"""``python -m ommx_memprof ...`` is the ``memprof`` command."""

from ._cli import main

main()
