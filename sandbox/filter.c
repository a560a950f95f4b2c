/*
 * The seccomp filter, built with libseccomp in the parent and exported once per network
 * mode as raw BPF (libseccomp 2.5 can only export to an fd: a memfd here). The child loads
 * the cached program with a bare prctl, last before execve (bubblewrap and OpenSSH do the
 * same), so nothing after it has to be allowed by it.
 *
 * Every denial is EPERM, as upstream's (codex linux-sandbox seccomp.rs):
 *  - always: ptrace, process_vm_readv/writev, io_uring_setup/enter/register, and the
 *    terminal injection ioctls TIOCSTI and TIOCLINUX;
 *  - network restricted: socket/socketpair for anything but AF_UNIX, and connect, accept,
 *    accept4, bind, listen, getpeername, getsockname, shutdown, sendto, sendmmsg, recvmmsg,
 *    getsockopt, setsockopt (recvfrom, sendmsg and recvmsg stay, as upstream's do);
 *  - network restricted: AF_UNIX sockets and socketpairs of type SOCK_DGRAM (or SOCK_RAW,
 *    which the kernel makes a datagram socket). sendmsg cannot be filtered on its address
 *    (seccomp cannot read the msghdr), and a datagram socket, even one of a connected pair,
 *    delivers to whatever socket file msg_name names: the host's /run/systemd/journal/socket,
 *    any local listener. Stream and seqpacket sockets only send where they are connected,
 *    and connect is denied. Where Landlock has LANDLOCK_ACCESS_FS_RESOLVE_UNIX (ABI 9) it
 *    denies the lookup too (landlock.c); this rule holds on every kernel and in the
 *    seccomp-only mode, which has no Landlock;
 *  - network enabled: socket/socketpair for AF_VSOCK (it reaches host services).
 * A syscall from another architecture (i386 int 0x80, x32) kills the process.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/seccomp.h>

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "protocol/xmalloc.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define FILTER_SOCK_TYPE_MASK 0xf /* the kernel's SOCK_TYPE_MASK */

/* Syscalls denied outright when the network is restricted. */
static const char *const seccomp_net_calls[] = {
	"connect",
	"accept",
	"accept4",
	"bind",
	"listen",
	"getpeername",
	"getsockname",
	"shutdown",
	"sendto",
	"sendmmsg",
	"recvmmsg",
	"getsockopt",
	"setsockopt",
	NULL,
};

/* Syscalls denied in every mode. */
static const char *const seccomp_always_calls[] = {
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	NULL,
};

/* The exported programs: [0] network restricted, [1] network enabled. */
static struct sock_fprog seccomp_cache[2];

/* Deny a syscall by name outright; 0 or -errno. */
static int
filter_deny(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture */
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
}

/*
 * Unix datagram sockets, the one way left to send to a socket file with the network off
 * (the head comment). The type's low bits name it; SOCK_CLOEXEC and SOCK_NONBLOCK sit above.
 */
static int
filter_unix_dgram(scmp_filter_ctx ctx)
{
	static const int calls[] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
	static const int types[] = {SOCK_DGRAM, SOCK_RAW};
	int r;

	for (size_t i = 0; i < 2; i++)
		for (size_t j = 0; j < 2; j++)
			if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), calls[i], 2,
				     SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
				     SCMP_A1_32(SCMP_CMP_MASKED_EQ, FILTER_SOCK_TYPE_MASK,
					     types[j]))) != 0)
				return r;
	return 0;
}

/* Add the rules of a mode; 0 or -errno. */
static int
filter_rules(scmp_filter_ctx ctx, int net)
{
	const char *const *n;
	int r;

	for (n = seccomp_always_calls; *n != NULL; n++)
		if ((r = filter_deny(ctx, *n)) != 0)
			return r;
	/* ioctl's request is an unsigned int in the kernel: compare the low 32 bits. */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
		     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI))) != 0 ||
		(r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
			 SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX))) != 0)
		return r;
	if (net) {
		if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     SCMP_A0_32(SCMP_CMP_EQ, AF_VSOCK))) != 0 ||
			(r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
				 SCMP_A0_32(SCMP_CMP_EQ, AF_VSOCK))) != 0)
			return r;
		return 0;
	}
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
		     SCMP_A0_32(SCMP_CMP_NE, AF_UNIX))) != 0 ||
		(r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
			 SCMP_A0_32(SCMP_CMP_NE, AF_UNIX))) != 0 ||
		(r = filter_unix_dgram(ctx)) != 0)
		return r;
	for (n = seccomp_net_calls; *n != NULL; n++)
		if ((r = filter_deny(ctx, *n)) != 0)
			return r;
	return 0;
}

/* Build and export the program of a mode into prog; 0 or -errno with *what set. */
static int
filter_build(int net, struct sock_fprog *prog, const char **what)
{
	scmp_filter_ctx ctx;
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	size_t off = 0;
	int fd = -1, r;

	*what = "seccomp_init";
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return -ENOMEM;
	*what = "seccomp attributes";
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0 ||
		(r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) != 0)
		goto out;
	*what = "seccomp rules";
	if ((r = filter_rules(ctx, net)) != 0)
		goto out;
	*what = "seccomp_export_bpf";
	if ((fd = memfd_create("app-server-seccomp", MFD_CLOEXEC)) == -1) {
		r = -errno;
		goto out;
	}
	if ((r = seccomp_export_bpf(ctx, fd)) != 0)
		goto out;
	if (fstat(fd, &st) == -1 || lseek(fd, 0, SEEK_SET) == -1) {
		r = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
		st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		r = -EINVAL;
		goto out;
	}
	buf = xmalloc((size_t)st.st_size);
	while (off < (size_t)st.st_size) {
		n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n == 0 ? -EIO : -errno;
			goto out;
		}
		off += (size_t)n;
	}
	prog->len = (unsigned short)(off / sizeof(struct sock_filter));
	prog->filter = (struct sock_filter *)buf;
	buf = NULL; /* transferred */
	r = 0;
out:
	if (fd != -1)
		close(fd);
	free(buf);
	seccomp_release(ctx);
	return r;
}

/* The program for a network mode, built on first use and kept; 0 or -1 with *cause. */
int
filter_program(int net, const struct sock_fprog **out, char **cause)
{
	struct sock_fprog *prog = &seccomp_cache[net ? 1 : 0];
	const char *what;
	int r;

	if (prog->filter == NULL && (r = filter_build(net, prog, &what)) != 0) {
		*cause = xasprintf("sandbox setup failed: seccomp: %s: %s (os error %d)", what,
			strerror(-r), -r);
		return -1;
	}
	*out = prog;
	return 0;
}

/* In the child: install the program (no_new_privs is already set); 0 or errno. */
int
filter_load(const struct sock_fprog *prog)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == -1)
		return errno;
	return 0;
}
