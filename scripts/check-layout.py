#!/usr/bin/env python3
"""make check-layout: the folders keep the layout docs/architecture.md draws.

Rooms and who may include whom (a room's sub-folders are part of it):
  protocol/           nothing of ours outside protocol/
  sandbox/            protocol/
  server/io/          protocol/
  server/transport/   protocol/, io/                      (reserved: listeners and connections)
  server/rpc/         protocol/, io/, transport/
  server/config/      protocol/, io/
  server/account/     protocol/, io/, config/             (reserved: auth.json, login flows)
  server/model/       protocol/, io/, config/, account/
  server/exec/        protocol/, sandbox/, io/, config/
  server/thread/      protocol/, io/, config/
  server/fs/          protocol/, io/
  server/skills/      protocol/, io/, config/, fs/        (reserved: skill discovery)
  server/mcp/         protocol/, sandbox/, io/, config/, exec/  (reserved: the MCP client)
  server/hooks/       protocol/, sandbox/, io/, config/, exec/  (lifecycle hooks)
  server/agent/       protocol/, sandbox/, io/, config/, account/, model/, exec/, thread/, fs/,
                      skills/, mcp/ (never rpc/, api/)
  server/mockmodel/   protocol/, io/, config/
  server/api/         everything but mockmodel/: where the protocol meets the engine
  server/main.c, server/daemon.c: everything (the wiring)
  clients/cli/        protocol/, io/, config/ (digest.h: the WebSocket key's SHA-1)

Inside a room (server/agent/ and server/agent/patch/, ...): a sub-folder inherits its room's
rules; the room's top and its sub-folders include each other's public headers; an internal
header (*_int.h) is included only from its own folder, never from a parent, child or sibling.

Also kept here:
  - includes name the folder ("io/outq.h" from server/, "agent/patch/apply_patch.h",
    "protocol/buf.h"); a header of the same folder by its bare name;
  - no folder under server/ holds more than MAX_FILES .c files or MAX_LINES lines of its own
    (.c and .h) without being split into sub-folders, nor more than one internal header;
  - every folder under server/ has a README.md saying what the room is for;
  - every path docs/architecture.md names exists.
Exit status 1 with one line per violation.
"""
import glob
import os
import re
import sys

ALLOW = {
    'protocol': {'protocol'},
    'sandbox': {'protocol'},
    'server/io': {'protocol'},
    'server/transport': {'protocol', 'server/io'},
    'server/rpc': {'protocol', 'server/io', 'server/transport'},
    'server/config': {'protocol', 'server/io'},
    'server/account': {'protocol', 'server/io', 'server/config'},
    'server/model': {'protocol', 'server/io', 'server/config', 'server/account'},
    'server/exec': {'protocol', 'sandbox', 'server/io', 'server/config'},
    'server/thread': {'protocol', 'server/io', 'server/config'},
    'server/fs': {'protocol', 'server/io'},
    'server/skills': {'protocol', 'server/io', 'server/config', 'server/fs'},
    'server/mcp': {'protocol', 'sandbox', 'server/io', 'server/config', 'server/exec'},
    'server/hooks': {'protocol', 'sandbox', 'server/io', 'server/config', 'server/exec'},
    'server/agent': {'protocol', 'sandbox', 'server/io', 'server/config', 'server/account',
                     'server/model', 'server/exec', 'server/thread', 'server/fs',
                     'server/skills', 'server/mcp', 'server/hooks'},
    'server/mockmodel': {'protocol', 'server/io', 'server/config'},
    'server/api': {'protocol', 'sandbox', 'server/io', 'server/transport', 'server/rpc',
                   'server/config', 'server/account', 'server/model', 'server/exec',
                   'server/thread', 'server/fs', 'server/skills', 'server/mcp', 'server/agent',
                   'server/hooks'},
    'server': None,  # main.c and daemon.c: anything
    'clients/cli': {'protocol', 'server/io', 'server/config'},
}
MAX_FILES = 20
MAX_LINES = 5000
DOC = 'docs/architecture.md'
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room(folder):
    """The room of the layout a folder belongs to: itself or its nearest listed ancestor."""
    while folder:
        if folder in ALLOW:
            return folder
        folder = os.path.dirname(folder)
    return None


def check_include(path, inc, problems):
    here = os.path.dirname(path)
    if '/' not in inc:
        if not os.path.exists(os.path.join(here, inc)):
            problems.append(f'{path}: "{inc}" is not in its own folder: name the folder')
        return
    target = None
    for base in ('', 'server/'):
        if os.path.exists(base + inc):
            target = base + inc
            break
    if target is None or inc.startswith('.'):
        problems.append(f'{path}: "{inc}" does not name a header from the root or server/')
        return
    if target.startswith('server/') and inc.startswith('server/'):
        problems.append(f'{path}: "{inc}": write it from server/ ("{inc[7:]}")')
    there = os.path.dirname(target)
    if there == here:
        problems.append(f'{path}: "{inc}" is in its own folder: include it by its bare name')
    if target.endswith('_int.h') and there != here:
        problems.append(f'{path}: includes {target}: an internal header is for {there}/ alone')
    src, tgt = room(here), room(there)
    allowed = ALLOW[src]
    if src != tgt and allowed is not None and tgt not in allowed:
        problems.append(f'{path}: includes {target}: {src}/ may not include {tgt}/')


def check_file(path, problems):
    if room(os.path.dirname(path)) is None:
        problems.append(f'{path}: not in a folder of the layout')
        return
    text = open(path, encoding='utf-8', errors='replace').read()
    for m in INC.finditer(text):
        check_include(path, m.group(1), problems)


def check_folders(problems):
    """Size of each folder under server/ and its README.md."""
    for dirpath, dirs, names in os.walk('server'):
        dirs.sort()
        if dirpath == 'server':
            continue
        if not os.path.isfile(os.path.join(dirpath, 'README.md')):
            problems.append(f'{dirpath}/: no README.md saying what the room is for')
        internal = sorted(n for n in names if n.endswith('_int.h'))
        if len(internal) > 1:
            problems.append(f'{dirpath}/: {len(internal)} internal headers ({", ".join(internal)}): '
                            'one per folder; a second family gets a sub-folder of its own')
        sources = [n for n in names if n.endswith('.c')]
        lines = 0
        for n in names:
            if n.endswith(('.c', '.h')):
                with open(os.path.join(dirpath, n), encoding='utf-8', errors='replace') as f:
                    lines += sum(1 for _ in f)
        if len(sources) > MAX_FILES or lines > MAX_LINES:
            problems.append(f'{dirpath}/: {len(sources)} .c files, {lines} lines: past '
                            f'{MAX_FILES} files or {MAX_LINES} lines, split it into sub-folders')


PATHLIKE = re.compile(r'`"?([A-Za-z0-9_./*-]+)"?`')
TOPS = ('server/', 'protocol/', 'sandbox/', 'tests/', 'clients/', 'scripts/', 'bench/', 'docs/',
        'schema/', '.ci/')
EXTS = ('.c', '.h', '.py', '.sh', '.md', '.mk', '.ts', '.json')


def named_paths(text):
    """The tokens of a doc that name files or folders of the tree."""
    for m in PATHLIKE.finditer(text):
        tok = m.group(1)
        if tok.startswith(('/', '.', '-')) or '..' in tok:
            continue
        # "turn/start" is a method, "agent/agent.c", "server/fs/" and "fs/search/" are paths
        if tok.endswith(EXTS) or tok.endswith('/') or tok.startswith(TOPS):
            yield tok


def exists(tok):
    bases = ('', 'server/', 'protocol/', 'clients/')
    cands = [tok] if tok.endswith(('/',) + EXTS) or '*' in tok else [tok, tok + '.c', tok + '.h']
    for base in bases:
        for c in cands:
            if glob.glob(base + c.rstrip('/')):
                return True
    if '/' not in tok:  # a bare file name or pattern: somewhere in the tree
        for top in ('protocol', 'sandbox', 'server', 'clients', 'tests', 'scripts', 'bench'):
            if '*' in tok and glob.glob(f'{top}/**/{tok}', recursive=True):
                return True
            for _, _, names in os.walk(top):
                if tok in names:
                    return True
    return False


def check_doc(problems):
    if not os.path.exists(DOC):
        problems.append(f'{DOC}: missing')
        return
    text = open(DOC, encoding='utf-8').read()
    for tok in sorted(set(named_paths(text))):
        if not exists(tok):
            problems.append(f'{DOC}: names `{tok}`, which does not exist')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.chdir(root)
    problems = []
    for top in ('protocol', 'sandbox', 'server', 'clients/cli'):
        for dirpath, dirs, names in os.walk(top):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(('.c', '.h')):
                    check_file(os.path.join(dirpath, n), problems)
    check_folders(problems)
    check_doc(problems)
    for p in problems:
        print(p)
    if problems:
        print(f'check-layout: {len(problems)} problem(s) with the layout (scripts/check-layout.py)')
        return 1
    print('check-layout: every include, folder and named path keeps the layout')
    return 0


if __name__ == '__main__':
    sys.exit(main())
