"""The rules engines (docs/architecture.md, "games: the rules engines"): pure rules, importing nothing of the server.

``make install`` compiles their hot modules with mypyc where a C compiler is
present (setup.py ``COMPILED``). ``PARTERRE_ENGINES=pure`` loads every module
from its ``.py`` source instead, and so does an edited source newer than its
compiled module (with a warning to run ``make compiled``): an edit always takes
effect. See :mod:`games.native`.
"""

import os
import warnings

from games.native import ENGINES_ENV, prefer_sources, stale_extensions

if os.environ.get(ENGINES_ENV) == "pure":
    prefer_sources()
elif _stale := stale_extensions(os.path.dirname(os.path.abspath(__file__))):
    warnings.warn(
        f"games: {', '.join(_stale)} changed after the compiled engines were built; importing every engine "
        f"from its .py source (run `make compiled` to rebuild)", RuntimeWarning, stacklevel=2,
    )
    prefer_sources()
