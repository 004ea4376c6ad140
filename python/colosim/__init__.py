"""colosim: run colosim scenarios from Python, over libcolosim.so (docs/python.md).

    import colosim
    r = colosim.run("resnet50_bert_timeslice.cfg",
                    set={"duration_s": 5, "tenants.resnet50.arrival.rate": 300.0}, seed=7)
    r.tenants["resnet50"]["latency_ms"]["p99"]      # the results document, as dicts
    r.to_dataframe()                                # one row per tenant, when pandas is there

Standard library only (ctypes, json); pandas is used by Results.to_dataframe() alone, when it
can be imported. The package runs scenarios and reads their results; it registers no plug-in
(kernel schedulers and arrival processes are C: docs/embedding.md).
"""

import ctypes
import json
import os

from . import _lib

__all__ = ["run", "find_data", "Results", "ColosimError", "library_path", "__version__"]
__version__ = getattr(_lib._install, "VERSION", "unknown")  # the source tree: unknown

_LIB = None
_LIB_PATH = None


def _c():
    """The loaded library (loaded on first use, so that importing the package never fails)."""
    global _LIB, _LIB_PATH
    if _LIB is None:
        _LIB, _LIB_PATH = _lib.load()
    return _LIB


def library_path():
    """The path libcolosim was loaded from (loading it if need be)."""
    _c()
    return _LIB_PATH


class ColosimError(Exception):
    """An error colosim reported: code (a negative COLO_E* value), source (the file, or
    "--set"), line (0 when unknown), key (the dotted key, may be empty) and text; str() is
    "source:line: key: text", as the command line prints it."""

    def __init__(self, record, message):
        super().__init__(message)
        self.code = record.code
        self.source = record.source.decode("utf-8", "replace")
        self.line = record.line
        self.key = record.key.decode("utf-8", "replace")
        self.text = record.text.decode("utf-8", "replace")


def _raise(err, rc):
    """Raises the error in err (a colo_error_t) for the failed call's code rc."""
    lib = _c()
    if not err.code:  # a code without a record: only its meaning is known
        err.code = rc
        err.text = lib.colo_strerror(rc)[:767]
    buf = ctypes.create_string_buffer(2048)
    lib.colo_error_format(ctypes.byref(err), buf, len(buf))
    raise ColosimError(err, buf.value.decode("utf-8", "replace"))


def _value(v):
    """A Python value as --set writes it: true/false, a number, or text as it is."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)  # always with a point or an exponent: a float stays a float
    return str(v)


def _overrides(set_, seed):
    """The overrides as "KEY=VALUE" strings: set_ is a dict, a list of such strings, or None."""
    if set_ is None:
        out = []
    elif isinstance(set_, dict):
        out = [f"{k}={_value(v)}" for k, v in set_.items()]
    elif isinstance(set_, str):
        out = [set_]
    else:
        out = [str(s) for s in set_]
    for s in out:
        if "=" not in s:
            raise ValueError(f"colosim: an override is KEY=VALUE, not {s!r}")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"colosim: seed is a non-negative integer, not {seed!r}")
        out.append(f"seed={seed}")  # as the command line's --seed
    return out


def find_data(name, sub="scenarios"):
    """The path of a scenario (sub "scenarios") or trace (sub "traces") colosim ships, by name:
    name itself when it is a file relative to the working directory or absolute; otherwise
    looked for in $COLOSIM_DATA_DIR, the installed share/colosim beside libcolosim, the source
    tree and the configure-time prefix (colo_datadir_find). None when not found."""
    lib = _c()
    buf = ctypes.create_string_buffer(4200)
    rc = lib.colo_datadir_find(os.fsencode(os.fspath(name)),
                               sub.encode() if sub else None, buf, len(buf))
    return os.fsdecode(buf.value) if rc == 0 else None


class Results(dict):
    """The results document of a run (docs/results.md) as a dict, as `colosim run -o` writes it
    (the same numbers); .tenants maps each tenant's name to its part, in the scenario's order."""

    @property
    def tenants(self):
        """{name: the tenant's dict} (arrived, completed, throughput_rps, latency_ms, ...)."""
        return {t["name"]: t for t in self.get("tenants", [])}

    def rows(self):
        """One flat dict per tenant: nested keys joined with dots ("latency_ms.p99")."""
        return [_flatten(t) for t in self.get("tenants", [])]

    def to_dataframe(self):
        """A pandas DataFrame of rows(), indexed by tenant name. Needs pandas (ImportError
        without it; nothing else in the package does)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("colosim: Results.to_dataframe needs pandas; "
                              "Results.rows() gives the same as dicts") from e
        rows = self.rows()
        return pandas.DataFrame(rows, index=[r["name"] for r in rows])


def _flatten(d, prefix=""):
    """d with nested dicts' keys joined by dots; lists are kept as values."""
    out = {}
    for k, v in d.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def run(scenario, set=None, seed=None):  # noqa: A002 - `set` as the command line's --set
    """Loads a scenario file, applies overrides and runs it; returns its Results.

    scenario: a path, or the name of a scenario colosim ships ("resnet50_bert_timeslice.cfg",
    "scenarios/mps_caps_h100.cfg"), found as find_data finds it. set: a dict {key: value} or a
    list of "KEY=VALUE" strings, exactly as `colosim run --set` takes them (keys like
    "tenants.resnet50.arrival.rate" or "tenants.[0].slo_ms"). seed: as --seed. Raises
    ColosimError (with the file, line and key) for a bad scenario or override, as the command
    line reports it. A cluster scenario is refused (clusters run from the command line).
    The run holds no Python lock (ctypes releases it) but cannot be interrupted by Ctrl-C.
    """
    lib = _c()
    path = os.fspath(scenario)
    found = find_data(path, "scenarios")
    sets = _overrides(set, seed)
    arr = (ctypes.c_char_p * max(len(sets), 1))(*[s.encode() for s in sets])
    err = _lib.ErrorRecord()
    lib.colo_error_clear(ctypes.byref(err))
    sc, sim = ctypes.c_void_p(), ctypes.c_void_p()
    try:
        rc = lib.colo_scenario_load(os.fsencode(found or path), arr, len(sets),
                                    ctypes.byref(sc), ctypes.byref(err))
        if not rc:
            rc = lib.colo_sim_new(sc, ctypes.byref(sim), ctypes.byref(err))
        if not rc:
            rc = lib.colo_sim_run(sim, ctypes.byref(err))
        if rc:
            _raise(err, rc)
        text = lib.colo_results_json_text(sim, arr, len(sets))
        if not text:
            raise MemoryError("colosim: out of memory writing the results")
        try:
            doc = json.loads(ctypes.string_at(text).decode("utf-8"))
        finally:
            lib.colo_results_text_free(text)
        return Results(doc)
    finally:
        lib.colo_sim_free(sim)
        lib.colo_scenario_free(sc)
