"""Process-wide state that survives the package travelling by value: on a
worker without roastop installed, process() arrives pickled once per chunk
with its own copy of the module globals it names, so state kept there would
be reset every chunk or could not be pickled (sockets, thread-locals). It
lives in a module object in sys.modules under a fixed name."""
import os
import sys
import types

_NAME = "_roastop_process_state"


def shared(name, factory):
    """The process's object ``name``, made by ``factory()`` on first use."""
    try:
        return sys.modules[_NAME].__dict__[name]     # one C lookup each, on the chunk's path
    except KeyError:
        state = sys.modules.setdefault(_NAME, types.ModuleType(_NAME))
    return state.__dict__.setdefault(name, factory())


def _pid_cell():
    """[pid, kept]: kept True when a fork hook keeps pid current in a child."""
    cell = [os.getpid(), False]

    def forked():
        cell[0] = os.getpid()
    try:
        os.register_at_fork(after_in_child=forked)
        cell[1] = True
    except (AttributeError, RuntimeError):  # no fork hooks here: asked every time
        pass
    return cell


def current_pid():
    """os.getpid() without its system call per chunk (several per chunk,
    each some microseconds cold after a process() body): the process's id
    read once and updated in a forked child by an os.register_at_fork hook."""
    cell = shared("pid", _pid_cell)
    return cell[0] if cell[1] else os.getpid()


def ship_by_value():
    """Makes cloudpickle carry roastop's code (every loaded submodule, by its
    own name: distributed checks a function's module by exact name) inside
    its pickles, so Dask workers and the scheduler need no roastop
    installed. False when cloudpickle is not importable."""
    try:
        import cloudpickle
    except ImportError:
        return False
    try:
        for name, module in list(sys.modules.items()):
            if module is not None and (name == "roastop" or name.startswith("roastop.")):
                cloudpickle.register_pickle_by_value(module)
    except Exception:  # noqa: BLE001 - an old cloudpickle: workers need roastop installed
        return False
    return True
