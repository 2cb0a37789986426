/**
 * Linux Landlock, through libc's syscall() (koffi, a maintained FFI that ships its binaries in its npm package):
 * an unprivileged process limits what it, and every process it becomes, may do with files and TCP, for good.
 * No privilege, no namespace and no setuid helper is needed, so it works where the service runs as an ordinary
 * user in a container (Docker's default seccomp profile allows these system calls), and it survives execve.
 * Constants from <linux/landlock.h>.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import koffi, { type LibraryHandle } from 'koffi';

type CFunction = ReturnType<LibraryHandle['func']>;

const SYS_LANDLOCK_CREATE_RULESET = 444;
const SYS_LANDLOCK_ADD_RULE = 445;
const SYS_LANDLOCK_RESTRICT_SELF = 446;
const LANDLOCK_CREATE_RULESET_VERSION = 1;
const LANDLOCK_RULE_PATH_BENEATH = 1;
const PR_SET_NO_NEW_PRIVS = 38;

/** File rights (LANDLOCK_ACCESS_FS_*), by the ABI version that brought them. */
const FS = {
  EXECUTE: 1n << 0n,
  WRITE_FILE: 1n << 1n,
  READ_FILE: 1n << 2n,
  READ_DIR: 1n << 3n,
  REMOVE_DIR: 1n << 4n,
  REMOVE_FILE: 1n << 5n,
  MAKE_CHAR: 1n << 6n,
  MAKE_DIR: 1n << 7n,
  MAKE_REG: 1n << 8n,
  MAKE_SOCK: 1n << 9n,
  MAKE_FIFO: 1n << 10n,
  MAKE_BLOCK: 1n << 11n,
  MAKE_SYM: 1n << 12n,
  REFER: 1n << 13n, // ABI 2
  TRUNCATE: 1n << 14n, // ABI 3
  IOCTL_DEV: 1n << 15n, // ABI 5
};
const NET_BIND_TCP = 1n << 0n; // ABI 4
const NET_CONNECT_TCP = 1n << 1n; // ABI 4
const SCOPE_ABSTRACT_UNIX_SOCKET = 1n << 0n; // ABI 6
const SCOPE_SIGNAL = 1n << 1n; // ABI 6

/** Every file right the kernel of `abi` knows: all are handled, so none is left allowed by omission. */
function handledFs(abi: number): bigint {
  let all = (1n << 13n) - 1n;
  if (abi >= 2) all |= FS.REFER;
  if (abi >= 3) all |= FS.TRUNCATE;
  if (abi >= 5) all |= FS.IOCTL_DEV;
  return all;
}

export type PathAccess = 'read' | 'execute' | 'write';

export interface PathRule {
  path: string;
  access: PathAccess;
}

interface Libc {
  syscall: CFunction;
  prctl: CFunction;
  execve: CFunction;
  fcntl: CFunction;
  errno: () => number;
}

let libc: Libc | undefined;
function loadLibc(): Libc {
  if (libc) return libc;
  const lib = koffi.load('libc.so.6');
  libc = {
    syscall: lib.func('long syscall(long number, ...)'),
    prctl: lib.func('int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)'),
    execve: lib.func('int execve(const char *path, const char **argv, const char **envp)'),
    fcntl: lib.func('int fcntl(int fd, int cmd, ...)'),
    errno: () => koffi.errno(),
  };
  return libc;
}

/** The Landlock ABI version this kernel offers (0: none, or not Linux, or refused by a seccomp filter). */
export function landlockAbi(): number {
  if (process.platform !== 'linux' || (process.arch !== 'x64' && process.arch !== 'arm64')) return 0;
  try {
    const version = Number(loadLibc().syscall(SYS_LANDLOCK_CREATE_RULESET, 'void *', null, 'size_t', 0, 'uint32_t', LANDLOCK_CREATE_RULESET_VERSION));
    return version > 0 ? version : 0;
  } catch {
    return 0;
  }
}

function rightsOf(access: PathAccess, directory: boolean, abi: number): bigint {
  const read = FS.READ_FILE | (directory ? FS.READ_DIR : 0n);
  if (access === 'read') return read;
  if (access === 'execute') return read | FS.EXECUTE;
  // Write: everything on what is beneath, but devices (a graph's folder holds its files, nothing else).
  const write = handledFs(abi) & ~(FS.MAKE_CHAR | FS.MAKE_BLOCK | FS.EXECUTE);
  return directory ? write : write & (FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE);
}

/**
 * Restricts this process for good: files only as `rules` allow (a rule's right holds beneath its path), no TCP at
 * all, no abstract Unix socket and no signal to a process outside the restriction. Throws with the errno when the
 * kernel refuses. Applies to the calling thread and what it starts or becomes: call it, then execve at once.
 */
export function restrictSelf(rules: readonly PathRule[], abi: number): void {
  const c = loadLibc();
  const fs = handledFs(abi);
  const net = abi >= 4 ? NET_BIND_TCP | NET_CONNECT_TCP : 0n;
  const scoped = abi >= 6 ? SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL : 0n;
  // struct landlock_ruleset_attr grew with the ABI: its size tells the kernel which fields are there.
  const attr = Buffer.alloc(24);
  attr.writeBigUInt64LE(fs, 0);
  attr.writeBigUInt64LE(net, 8);
  attr.writeBigUInt64LE(scoped, 16);
  const size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  const ruleset = Number(c.syscall(SYS_LANDLOCK_CREATE_RULESET, 'void *', attr, 'size_t', size, 'uint32_t', 0));
  if (ruleset < 0) throw new Error(`landlock_create_ruleset failed (errno ${c.errno()})`);
  for (const rule of rules) {
    let fd: number;
    try {
      fd = openSync(rule.path, 'r');
    } catch {
      continue; // A path this machine does not have is nothing to allow.
    }
    try {
      const directory = fstatSync(fd).isDirectory();
      // struct landlock_path_beneath_attr { __u64 allowed_access; __s32 parent_fd; } __attribute__((packed))
      const beneath = Buffer.alloc(12);
      beneath.writeBigUInt64LE(rightsOf(rule.access, directory, abi) & fs, 0);
      beneath.writeInt32LE(fd, 8);
      const added = Number(c.syscall(SYS_LANDLOCK_ADD_RULE, 'int', ruleset, 'int', LANDLOCK_RULE_PATH_BENEATH, 'void *', beneath, 'uint32_t', 0));
      if (added < 0) throw new Error(`landlock_add_rule failed for ${rule.path} (errno ${c.errno()})`);
    } finally {
      closeSync(fd);
    }
  }
  // Required of an unprivileged caller, and right for every caller: nothing it executes gains privileges.
  if (c.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) !== 0) throw new Error(`prctl(PR_SET_NO_NEW_PRIVS) failed (errno ${c.errno()})`);
  const restricted = Number(c.syscall(SYS_LANDLOCK_RESTRICT_SELF, 'int', ruleset, 'uint32_t', 0));
  if (restricted < 0) throw new Error(`landlock_restrict_self failed (errno ${c.errno()})`);
  closeSync(ruleset);
}

const F_SETFD = 2;

/**
 * Replaces this process with `file` (argv, env), keeping file descriptors 0 to `keepFds` open across it (Node marks
 * the ones it opened close-on-exec). Returns only on failure, by throwing.
 */
export function execve(file: string, argv: readonly string[], env: Readonly<Record<string, string>>, keepFds: number): never {
  const c = loadLibc();
  for (let fd = 0; fd <= keepFds; fd++) c.fcntl(fd, F_SETFD, 'int', 0);
  const envp = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  c.execve(file, [...argv, null], [...envp, null]);
  throw new Error(`execve(${file}) failed (errno ${c.errno()})`);
}
