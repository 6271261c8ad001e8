"""One settings object, and where each of its values came from.

Every value is taken from the first of: a command-line flag, an ``ABORIST_*`` environment
variable, the optional TOML config file, the default. A variable set to the empty string
counts as unset.

Where data lives (``home``): ``--home`` / ``ABORIST_HOME``; else a project-local
``.aborist/`` directory found by walking up from the current directory (as git finds
``.git``); else ``home`` in the config file; else the per-user data directory
(platformdirs: ``$XDG_DATA_HOME/aborist``, by default ``~/.local/share/aborist`` on
Linux). So every command finds the same ledger and shards wherever it is run from. The
home holds the SQLite ledger (``ledger.db``) and the shards (``shards/``); it is created
0700 (:func:`prepare_home`). A home or shard directory that exists but is not a
directory is a :class:`ConfigError` naming where it was set.

The config file is ``$ABORIST_CONFIG``, else ``config.toml`` in the per-user config
directory (``$XDG_CONFIG_HOME/aborist``, by default ``~/.config/aborist``). Only the
default one may be missing: a file ``$ABORIST_CONFIG`` names must exist, and any config
file must be readable UTF-8 TOML (else :class:`ConfigError`). Its keys are
the settings' names (:data:`KEYS`): ``home``, ``db_url`` (e.g. PostgreSQL), ``shard_dir``,
``llm_base_url``, ``llm_model``, ``llm_api_key``, ``llm_timeout`` (seconds; checked where
it is used, :func:`aborist.clients.select.llm_timeout`), ``shards`` (the default shards of
``aborist query``, a list) and ``log_origin`` (the name this ledger's checkpoints carry).

A plain dataclass: constructing :class:`Settings` directly never reads the environment or
a file (tests and library callers get exactly what they pass); :func:`load_settings` and
:func:`resolve_settings` do the reading.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from aborist.errors import InputError
from ledger.jsonsafe import read_bounded

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "KEYS",
    "PROJECT_DIR",
    "ConfigError",
    "Resolved",
    "Settings",
    "config_path",
    "default_home",
    "find_project_home",
    "load_settings",
    "prepare_home",
    "resolve_settings",
    "source_name",
    "use_flags",
]

ENV_PREFIX = "ABORIST_"
CONFIG_ENV = "ABORIST_CONFIG"
PROJECT_DIR = ".aborist"
APP_NAME = "aborist"
_PATHS = frozenset({"home", "shard_dir"})
#: Data directory and file modes: the ledger holds every question and answer.
DIR_MODE = 0o700
FILE_MODE = 0o600


class ConfigError(InputError):
    """The config file cannot be read, or holds a key or value aborist does not know."""


@dataclass(frozen=True, slots=True)
class Settings:
    """``home`` None means the per-user data directory (:func:`default_home`)."""

    home: Path | None = None
    db_url: str | None = None
    shard_dir: Path | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout: str | None = None
    shards: tuple[str, ...] = ()
    log_origin: str | None = None
    #: Where each value came from, as :class:`Resolved` has it (not a setting; filled by
    #: :func:`resolve_settings` and :meth:`from_env`), so a message about a bad value
    #: can name its source (:func:`source_name`).
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``ABORIST_*`` variables alone (``os.environ`` unless given)."""
        env = os.environ if environ is None else environ
        found = _from_env(env)
        values: dict[str, Any] = {k: v for k, (v, _) in found.items()}
        return cls(**values, origins={k: origin for k, (_, origin) in found.items()})

    def data_home(self) -> Path:
        """The directory holding the ledger and the shards."""
        return self.home if self.home is not None else default_home()

    def ledger_url(self) -> str:
        """The ledger database URL: ``db_url`` or SQLite under the home."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(self.data_home() / 'ledger.db').as_posix()}"

    def shards_path(self) -> Path:
        """Directory holding one SQLite file per shard."""
        return self.shard_dir if self.shard_dir is not None else self.data_home() / "shards"


KEYS = tuple(f.name for f in fields(Settings) if f.name != "origins")
_FLAGS: ContextVar[Mapping[str, object] | None] = ContextVar("aborist_flags", default=None)


def use_flags(**flags: object) -> None:
    """Record global flags (``aborist --home DIR``) for every later :func:`load_settings`
    of this command; the command group calls it on each invocation."""
    _FLAGS.set({k: v for k, v in flags.items() if v is not None})


def default_home() -> Path:
    """The per-user data directory (``$XDG_DATA_HOME/aborist`` on Linux)."""
    from platformdirs import user_data_path

    return Path(user_data_path(APP_NAME, appauthor=False))


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$ABORIST_CONFIG``, else ``config.toml`` in the per-user config directory."""
    env = os.environ if environ is None else environ
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]).expanduser()
    from platformdirs import user_config_path

    return Path(user_config_path(APP_NAME, appauthor=False)) / "config.toml"


def find_project_home(start: Path | None = None) -> Path | None:
    """The nearest ``.aborist/`` directory in ``start`` (default: the current directory)
    or one of its parents, as git finds ``.git``."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / PROJECT_DIR
        if candidate.is_dir():
            return candidate
    return None


def _convert(key: str, value: object, where: str) -> object:
    if isinstance(value, Path):
        value = str(value)
    if key == "shards":
        if isinstance(value, str):
            value = [s for s in (p.strip() for p in value.split(",")) if s]
        if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
            raise ConfigError(f"{where}: shards must be a list of shard names")
        return tuple(value)
    if key == "llm_timeout" and isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be a string, not {type(value).__name__}")
    if key in _PATHS:
        if not value.strip():  # Path("") is ".": the data would follow the current directory
            raise ConfigError(f"{where}: {key} is empty; give a directory")
        return Path(value).expanduser()
    return value


def _from_env(env: Mapping[str, str]) -> dict[str, tuple[object, str]]:
    out: dict[str, tuple[object, str]] = {}
    for key in KEYS:
        name = ENV_PREFIX + key.upper()
        raw = env.get(name, "")
        if raw:
            out[key] = (_convert(key, raw, name), f"environment ({name})")
    return out


#: A config file's largest size (a few settings; a pipe or a device, `ABORIST_CONFIG=/dev/zero`,
#: was read whole, to a MemoryError traceback).
MAX_CONFIG_BYTES = 1024 * 1024


def _from_file(path: Path, *, explicit: bool = False) -> dict[str, tuple[object, str]]:
    """The config file's settings. A missing file at the default location is no config;
    a missing file named by ``$ABORIST_CONFIG`` (``explicit``) is a :class:`ConfigError`,
    as is one that cannot be read or is not valid TOML, wherever it is."""
    try:
        with path.open("rb") as f:
            raw = read_bounded(f, MAX_CONFIG_BYTES)
        if raw is None:
            raise ConfigError(
                f"the config file {path} is larger than {MAX_CONFIG_BYTES:,} bytes; "
                "it is not a config file"
            )
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        if explicit:
            raise ConfigError(
                f"{CONFIG_ENV} names the config file {path}, which does not exist; "
                f"create it or unset {CONFIG_ENV}"
            ) from None
        return {}
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read the config file {path}: not UTF-8 text ({e})") from e
    except OSError as e:
        raise ConfigError(f"cannot read the config file {path}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"the config file {path} is not valid TOML: {e}") from e
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"the config file {path} nests too deep to be a config file") from None
    out: dict[str, tuple[object, str]] = {}
    for key, value in data.items():
        if key not in KEYS:
            raise ConfigError(
                f"the config file {path} has an unknown key {key!r}; known: {', '.join(KEYS)}"
            )
        out[key] = (_convert(key, value, f"{path}: {key}"), f"config file ({path})")
    return out


@dataclass(frozen=True)
class Resolved:
    """Settings with the origin of each value ("flag (--home)", "environment
    (ABORIST_HOME)", "project (...)", "config file (...)", "default")."""

    settings: Settings
    config_file: Path

    @property
    def origins(self) -> Mapping[str, str]:
        """Where each value came from: the settings carry it (:func:`source_name`)."""
        return self.settings.origins


def resolve_settings(
    flags: Mapping[str, object] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Resolved:
    """Every setting from flag > environment > (for ``home``, a project ``.aborist/``) >
    config file > default, with where each came from."""
    env = os.environ if environ is None else environ
    given = dict(_FLAGS.get() or {})
    given.update({k: v for k, v in (flags or {}).items() if v is not None})
    cfg = config_path(env)
    layers = [
        {k: (_convert(k, v, f"--{k.replace('_', '-')}"), f"flag (--{k.replace('_', '-')})")
         for k, v in given.items() if k in KEYS and not (k == "shards" and not v)},
        _from_env(env),
    ]  # fmt: skip
    project = find_project_home(cwd)
    if project is not None:
        layers.append({"home": (project, f"project ({project})")})
    layers.append(_from_file(cfg, explicit=bool(env.get(CONFIG_ENV))))
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for layer in layers:
        for key, (value, origin) in layer.items():
            if key not in values:
                values[key] = value
                origins[key] = origin
    for key in KEYS:
        origins.setdefault(key, "default")
    _check_directories(values, origins)
    return Resolved(Settings(**values, origins=origins), cfg)


def source_name(settings: Settings, key: str) -> str:
    """How a message names where ``settings``' value of ``key`` came from: the flag
    (``--base-url``), the variable (``ABORIST_LLM_TIMEOUT``), or the key and the config
    file (``llm_timeout in the config file PATH``). The variable when the origin is not
    known (a :class:`Settings` built directly)."""
    kind, _, name = settings.origins.get(key, "").partition(" (")
    name = name.removesuffix(")")
    if kind == "config file" and name:
        return f"{key} in the config file {name}"
    if kind in ("flag", "environment") and name:
        return name
    return ENV_PREFIX + key.upper()


_DIRECTORY_NAMES = {"home": "data home", "shard_dir": "shard directory"}


def _check_directories(values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """A home or shard directory that exists but is not a directory (a file) is a
    :class:`ConfigError` naming where it was set: every command would otherwise fail on
    it later with a misleading line ("no ledger at FILE/ledger.db; run migrate"), or
    list no shards and exit 0."""
    for key, what in _DIRECTORY_NAMES.items():
        path = values.get(key)
        if isinstance(path, Path) and _not_a_directory(path):
            kind, _, name = origins[key].partition(" (")
            name = name.removesuffix(")")
            where = f"the config file {name}" if kind == "config file" else name
            raise ConfigError(f"{where} names {path} as the {what}, but it is not a directory")


def _not_a_directory(path: Path) -> bool:
    """Whether ``path`` exists and is not a directory. A path that cannot be looked at (a
    name too long, a directory above it not searchable) is not judged here: the command
    that uses it says why it cannot (``--help`` and ``config`` still work)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISDIR(mode)


def load_settings(**overrides: object) -> Settings:
    """The settings, with non-None ``overrides`` (from flags) on top."""
    return resolve_settings(overrides).settings


def prepare_home(settings: Settings) -> Path | None:
    """Create the home (mode 0700) if it does not exist yet; returns it when it was just
    created, so the caller can say where data is kept (None when it already existed)."""
    home = settings.data_home()
    try:  # is_dir() too raises for a name too long or a directory above not searchable
        if home.is_dir():
            return None
        home.mkdir(mode=DIR_MODE, parents=True)
    except FileExistsError:
        return None
    except OSError as e:
        raise InputError(f"cannot create the data directory {home}: {e.strerror or e}") from e
    return home
