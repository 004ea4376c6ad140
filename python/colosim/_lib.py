"""_lib.py: finding and loading libcolosim.so with ctypes, and the C functions the package calls.

The library is, in order: $COLOSIM_LIBRARY (the library file, or the folder holding it), the
installed one beside this package (the relative path in _install.py, written at install time,
so a moved prefix still works), then whatever the dynamic loader finds as libcolosim.so.0
(LD_LIBRARY_PATH, ldconfig). See docs/python.md.
"""

import ctypes
import os

try:  # written by CMake at install time; absent in the source tree
    from . import _install
except ImportError:  # pragma: no cover - the source tree
    _install = None

LIBRARY_NAME = getattr(_install, "LIBRARY_NAME", "libcolosim.so.0")


class ErrorRecord(ctypes.Structure):
    """colo_error_t (sim/engine/errors.h): code, source file, line, key and text."""

    _fields_ = [
        ("code", ctypes.c_int),
        ("source", ctypes.c_char * 512),
        ("line", ctypes.c_int),
        ("key", ctypes.c_char * 256),
        ("text", ctypes.c_char * 768),
    ]


def _candidates():
    """The library files to try, in order, each with where it came from (for the error)."""
    env = os.environ.get("COLOSIM_LIBRARY")
    if env:
        yield (os.path.join(env, LIBRARY_NAME) if os.path.isdir(env) else env), "COLOSIM_LIBRARY"
        return  # an explicit choice: nothing else is tried behind the user's back
    here = os.path.dirname(os.path.abspath(__file__))
    if _install is not None:
        path = os.path.normpath(os.path.join(here, _install.LIBDIR_FROM_PACKAGE, LIBRARY_NAME))
        yield path, "beside the installed package"
    yield LIBRARY_NAME, "the dynamic loader's search path"


def _declare(lib):
    """Declares the argument and result types of the functions used (colosim.h)."""
    p, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    s, err = ctypes.c_char_p, ctypes.POINTER(ErrorRecord)
    strs = ctypes.POINTER(ctypes.c_char_p)
    sigs = {
        "colo_error_clear": (None, [err]),
        "colo_error_format": (None, [err, ctypes.c_char_p, sz]),
        "colo_strerror": (s, [i]),
        "colo_scenario_load": (i, [s, strs, sz, ctypes.POINTER(p), err]),
        "colo_scenario_free": (None, [p]),
        "colo_sim_new": (i, [p, ctypes.POINTER(p), err]),
        "colo_sim_run": (i, [p, err]),
        "colo_sim_free": (None, [p]),
        "colo_results_json_text": (p, [p, strs, sz]),  # p: freed with colo_results_text_free
        "colo_results_text_free": (None, [p]),
        "colo_datadir_find": (i, [s, s, ctypes.c_char_p, sz]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def load():
    """Loads libcolosim.so (see the module's comment); raises OSError naming every place tried."""
    tried = []
    for path, why in _candidates():
        try:
            return _declare(ctypes.CDLL(path)), path
        except OSError as e:
            tried.append(f"{path} ({why}): {e}")
        except AttributeError as e:  # an older libcolosim without a function used here
            tried.append(f"{path} ({why}): {e}")
    raise OSError(
        "colosim: cannot load libcolosim; tried " + "; ".join(tried)
        + ". Set COLOSIM_LIBRARY to the library file (docs/python.md)."
    )
