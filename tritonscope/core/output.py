"""The one writer: every file tritonscope writes goes through here.

Two promises, for every command (`compile/show/diff/sweep/bench --save`,
`layout --svg`) and for the caches:

- checked before any work: `check_path` tells the format from the extension
  and refuses a path that cannot be written (missing folder, a folder, no
  permission, a link to nothing, a folder where no file can be made such
  as /proc, an existing file without --force) before a compile or a sweep
  starts, so a long run never ends in "cannot save";
- written all at once or not at all: the bytes go to a temporary file in the
  same folder, which is then renamed over the target.  An error or Ctrl-C
  part way leaves no half-written file (and an existing file untouched).

Errors are OutputError (exit code 8) with a hint.

A relative path is the user's, in the folder the command started in
(`started_in`, which the CLI sets around every command): a kernel module
that calls os.chdir() at import cannot send a --save or --emit elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from tritonscope.core.errors import OutputError

EXISTS_HINT = "Pass --force to overwrite it, or choose another name."

_START: str | None = None  # the folder the running command started in (None: outside a command)


@contextlib.contextmanager
def started_in(folder: str | None):
    """Within it, a relative output path is relative to `folder`, wherever the process's cwd has moved since."""
    global _START
    before, _START = _START, folder
    try:
        yield
    finally:
        _START = before


def _here(path: str | Path) -> Path:
    """`path` where the user meant it: unchanged unless it is relative and the cwd moved since the command
    started (an imported kernel module chdir'ed), then made absolute against the folder it started in."""
    path = Path(path)
    if _START is None or path.is_absolute() or str(path).startswith("~"):
        return path
    try:
        if os.getcwd() == _START:
            return path
    except OSError:  # the cwd was removed
        pass
    return Path(_START) / path


def check_path(path: str | Path, *, force: bool = False, formats: dict[str, str] | None = None,
               what: str = "output") -> str:
    """Fail early (before any work) when `path` cannot be written; the format name.

    `formats` maps extensions to format names ({".md": "markdown", ...}); the
    result is the format of `path` ("" when no formats are given).
    """
    fmt = format_of(path, formats, what) if formats is not None else ""
    check_writable(path, force=force)
    return fmt


def format_of(path: str | Path, formats: dict[str, str], what: str = "output") -> str:
    """'html' for 'r.html' with formats {'.html': 'html'}; OutputError for another extension."""
    ext = Path(path).suffix.lower()
    if ext not in formats:
        names = list({fmt: ext for ext, fmt in reversed(formats.items())}.values())[::-1]  # first ext per format
        listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        raise OutputError(
            f"Cannot tell the {what} format of {str(path)!r}: "
            + (f"unknown extension {ext!r}." if ext else "it has no extension."),
            hint=f"Name the file {listed}.")
    return formats[ext]


@contextlib.contextmanager
def os_errors(path: str | Path, what: str = "write"):
    """An OSError from looking at `path` (a name too long for the filesystem, a folder we may not enter) as an
    OutputError: "Cannot write PATH: File name too long." with a hint that names the cause."""
    try:
        yield
    except OSError as e:
        raise OutputError(f"Cannot {what} {path}: {e.strerror or e}.", hint=_os_hint(Path(path), e)) from None


def _os_hint(path: Path, e: OSError) -> str:
    import errno

    if e.errno == errno.ENAMETOOLONG:
        longest = max(path.parts or (str(path),), key=lambda part: len(os.fsencode(part)))
        size = len(os.fsencode(longest))
        if size > 255:
            return (f"A file or folder name is at most 255 bytes (on most filesystems); {longest[:24]}... is "
                    f"{size}: choose a shorter name.")
        return (f"The whole path is {len(os.fsencode(str(path)))} bytes, more than the system takes: "
                "choose a shorter one.")
    return "Check the path and your permissions."


def check_writable(path: str | Path, *, force: bool = False) -> Path:
    """The path, when a file can be written there (and replaced only with `force`)."""
    path = _here(path)
    with os_errors(path):
        return _check_writable(path, force=force)


def _check_writable(path: Path, *, force: bool) -> Path:
    if path.is_dir():
        raise OutputError(f"Cannot write {path}: it is a folder.", hint="Give a file name.")
    if path.is_symlink() and not path.exists():
        raise OutputError(f"Cannot write {path}: it is a symbolic link to {os.readlink(path)}, which does not exist.",
                          hint="Remove the link, or choose another name.")
    if path.exists() and not force:
        raise _exists(path)
    parent = _parent(path)
    if not parent.exists():
        raise OutputError(f"Cannot write {path}: the folder {parent} does not exist.",
                          hint="Create the folder first, or choose another path.")
    if not parent.is_dir():
        raise OutputError(f"Cannot write {path}: {parent} is not a folder.", hint="Choose another path.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write {path}: no permission to write in {parent}.",
                          hint="Choose a folder you can write to.")
    _probe(path, parent)
    return path


def check_folder(folder: str | Path, *, force: bool = False, holds: str | None = None,
                 what: str = "folder") -> Path:
    """The folder, when files can be written into it (it is made, with its parents, when missing): checked
    before any work, as check_writable checks a file.  An existing file there, a path under a file, or a
    folder where nothing can be made (/proc) is an OutputError; so is a folder that already holds the file
    `holds` (a record's manifest.json), unless `force`."""
    if "\x00" in str(folder):   # no filesystem takes it (os.stat raises ValueError, not OSError)
        raise OutputError(f"Cannot write into {str(folder)!r}: a path cannot hold a NUL character.",
                          hint="Choose another name.")
    if not str(folder).strip() or str(folder) in (".", "./"):  # '' is the current folder: never write a record there
        raise OutputError(f"Cannot write the {what} into {str(folder)!r}: give it a folder of its own.",
                          hint=f"e.g. --record {what}s/run1 (the folder is made when missing).")
    folder = _here(folder)
    with os_errors(folder, "write into"):
        return _check_folder(folder, force=force, holds=holds, what=what)


def _check_folder(folder: Path, *, force: bool, holds: str | None, what: str) -> Path:
    if folder.is_symlink() and not folder.exists():
        raise OutputError(f"Cannot write into {folder}: it is a symbolic link to {os.readlink(folder)}, which "
                          "does not exist.", hint="Remove the link, or choose another name.")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"Cannot write into {folder}: it is a file, and the {what} is a folder.",
                          hint="Give the name of a folder (it is made when missing).")
    if holds and (folder / holds).exists() and not force:
        raise OutputError(f"{folder} already holds a {what} ({holds}); not overwriting it.", hint=EXISTS_HINT)
    base = folder
    while not base.exists() and not base.is_symlink() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise OutputError(f"Cannot write into {folder}: {base} is not a folder.", hint="Choose another path.")
    if not os.access(base, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write into {folder}: no permission to write in {base}.",
                          hint="Choose a folder you can write to.")
    _probe(folder, base)
    return folder


def _probe(path: Path, parent: Path) -> None:
    """Create and remove a file in `parent`: the permission bits do not tell everything (/proc, /sys, a
    read-only mount, root's access() answers yes to every folder)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".probe", dir=parent)
    except OSError as e:
        raise OutputError(f"Cannot write {path}: no file can be made in {parent} ({e.strerror or e}).",
                          hint="Choose a folder you can write to.") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_atomic(path: str | Path, data: str | bytes, *, force: bool = False) -> Path:
    """Write `data` (str or bytes) to `path` all at once, or not at all.

    Without `force` an existing file is never replaced, even one created
    while we wrote.
    """
    path = check_writable(path, force=force)
    try:
        _write_via_temp(path, data, replace=force, durable=True)
    except OutputError:
        raise
    except OSError as e:
        raise OutputError(f"Cannot write {path}: {e.strerror or e}.",
                          hint="Check the path, the free disk space and your permissions.") from e
    return path


def write_folder(folder: str | Path, write, *, force: bool = False) -> list[Path]:
    """Write several files into `folder` all at once or not at all (`--emit DIR`).

    `write(staging)` writes them into a hidden staging folder inside
    `folder` (the same filesystem, so moving them is a rename); only when
    every one is written are they moved into place.  A failure part way (a
    full disk, Ctrl-C) removes what was written, and `folder` too when this
    call created it: a folder of 3 of 8 files, which `open` would accept as
    a kernel, is never left.  An existing file is replaced only with `force`,
    and that is checked for every file before any is moved.
    """
    import shutil

    folder = _here(folder)
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    staging: Path | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".tritonscope-", suffix=".partial", dir=folder))
        write(staging)
        names = sorted(p.name for p in staging.iterdir())
        clash = [n for n in names if (folder / n).exists()]
        if clash and not force:
            raise _exists(folder / clash[0])
        moved = [os.replace(staging / n, folder / n) or folder / n for n in names]
    except BaseException as e:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for p in created:  # deepest first: only the folders this call made, and only when empty
            try:
                p.rmdir()
            except OSError:
                break
        if isinstance(e, OutputError):
            raise OutputError(f"Cannot write into {folder}: {_without(e.message, staging)} Nothing was written.",
                              hint=e.hint) from None
        if isinstance(e, OSError):
            raise OutputError(f"Cannot write into {folder}: {e.strerror or e}. Nothing was written.",
                              hint="Check the path, the free disk space and your permissions.") from None
        raise
    staging.rmdir()
    return moved


def _without(message: str, staging: Path | None) -> str:
    """A writer's message without the staging folder's name (the user named the folder, not it)."""
    return message.replace(f"{staging}{os.sep}", "") if staging is not None else message


def write_cache(path: str | Path, data: str | bytes) -> bool:
    """Store a cache entry atomically (readers never see half of one); False if it failed.

    The cache is an optimisation only, so a failure is not an error, and
    entries are not fsynced: a lost entry is recomputed.  A store into
    tritonscope's cache folder may prune it to its size cap (cache_prune).
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_via_temp(path, data, replace=True, durable=False)
    except OSError:
        return False
    from tritonscope.core import cache_prune

    cache_prune.after_store(path, len(data))
    return True


def _write_via_temp(path: Path, data: str | bytes, *, replace: bool, durable: bool) -> None:
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=_parent(path))
        binary = isinstance(data, bytes)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        if replace:
            os.replace(tmp, path)
        else:
            _rename_no_clobber(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _rename_no_clobber(tmp: str, path: Path) -> None:
    """Move tmp to path unless path exists (checked atomically where the filesystem allows)."""
    try:
        os.link(tmp, path)  # fails with FileExistsError instead of replacing
    except FileExistsError:
        raise _exists(path) from None
    except OSError:  # a filesystem without hard links
        if path.exists():
            raise _exists(path) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def _exists(path: Path) -> OutputError:
    return OutputError(f"{path} already exists; not overwriting it.", hint=EXISTS_HINT)


def _parent(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
