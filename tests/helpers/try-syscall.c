/*
 * try-syscall: make named system calls and print what each gave, one line per name:
 * "NAME: OK", "NAME: EPERM" (the errno's name) or "NAME: = VALUE". Run inside a sandbox
 * by the sandbox tests, like bubblewrap's tests/try-syscall.c: calls that would do harm are
 * made with a bad fd, pid or pointer, so that an unfiltered call fails harmlessly (EBADF,
 * ESRCH, EFAULT) and a filtered one shows the sandbox's errno instead.
 *
 *   socket-unix socket-inet socket-inet6 socket-netlink socket-packet socket-vsock
 *   socketpair-unix (plus a write and a recvfrom through it) socketpair-inet
 *   io_uring_setup ptrace process_vm_readv tiocsti tioclinux mount (an fsopen: harmless)
 *   unshare-user
 *   connect-tcp:PORT bind-tcp connect-abstract:NAME kill:PID
 *   connect-unix:PATH (a stream connect to a socket file)
 *   dgram-sendmsg:PATH pair-sendmsg:PATH seqpacket-sendmsg:PATH (a sendmsg naming a socket
 *   file, from a datagram socket, one end of a datagram socketpair, a seqpacket socket)
 *   nnp caps (values) i386 x32 (a foreign-ABI getpid: the sandbox kills the process)
 */
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <linux/capability.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

/* Print the outcome of a call that returned r (with errno). */
static void
report(const char *name, long r)
{
	const char *e;

	if (r >= 0) {
		printf("%s: OK\n", name);
		return;
	}
	e = strerrorname_np(errno);
	printf("%s: %s\n", name, e != NULL ? e : "E?");
}

/* socket(domain, type, 0): OK or the errno. */
static long
try_socket(int domain, int type)
{
	int fd = socket(domain, type, 0);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* A unix socketpair carrying one message (write, then recvfrom). */
static long
try_socketpair(void)
{
	char buf[4];
	int sv[2];
	long r = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return -1;
	if (write(sv[0], "ping", 4) == 4 && recvfrom(sv[1], buf, sizeof buf, 0, NULL, NULL) == 4 &&
		memcmp(buf, "ping", 4) == 0)
		r = 0;
	else if (errno == 0)
		errno = EIO;
	close(sv[0]);
	close(sv[1]);
	return r;
}

/* A TCP connect to 127.0.0.1:port. */
static long
try_connect(int port)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	long r;

	if (fd == -1)
		return -1;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = connect(fd, (struct sockaddr *)&sin, sizeof sin);
	close(fd);
	return r;
}

/* A TCP bind to 127.0.0.1, any port. */
static long
try_bind(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	long r;

	if (fd == -1)
		return -1;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = bind(fd, (struct sockaddr *)&sin, sizeof sin);
	close(fd);
	return r;
}

/* A connect to the abstract unix socket "\0name". */
static long
try_abstract(const char *name)
{
	struct sockaddr_un sun;
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	long r;

	if (fd == -1)
		return -1;
	if (n + 1 > sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		close(fd);
		return -1;
	}
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, name, n);
	r = connect(fd, (struct sockaddr *)&sun,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
	close(fd);
	return r;
}

/* A unix address for a path; -1 (ENAMETOOLONG) when it does not fit. */
static int
unix_addr(const char *path, struct sockaddr_un *sun)
{
	if (strlen(path) >= sizeof sun->sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

/* A stream connect to the socket file at path. */
static long
try_connect_unix(const char *path)
{
	struct sockaddr_un sun;
	int fd;
	long r;

	if (unix_addr(path, &sun) == -1 || (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	r = connect(fd, (struct sockaddr *)&sun, sizeof sun);
	close(fd);
	return r;
}

/* sendmsg of "how" to the socket file at path from a socket of the kind how names. */
static long
try_sendmsg(const char *how, const char *path)
{
	struct sockaddr_un sun;
	struct iovec iov = {(void *)how, strlen(how)};
	struct msghdr m = {
		.msg_name = &sun, .msg_namelen = sizeof sun, .msg_iov = &iov, .msg_iovlen = 1};
	int sv[2] = {-1, -1};
	long r = -1;

	if (unix_addr(path, &sun) == -1)
		return -1;
	if (strcmp(how, "pair") == 0)
		r = socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	else if ((sv[0] = socket(AF_UNIX, strcmp(how, "dgram") == 0 ? SOCK_DGRAM : SOCK_SEQPACKET,
			  0)) >= 0)
		r = 0;
	if (r == 0)
		r = sendmsg(sv[0], &m, 0);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return r;
}

/* getpid through the i386 ABI (int 0x80, eax 20): the sandbox kills us. */
static long
try_i386(void)
{
	long r = 20;

	__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
	return r;
}

/* capget: "eff prm" of the first 32 bits and the rest. */
static void
print_caps(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) == -1) {
		report("caps", -1);
		return;
	}
	printf("caps: = %x %x %x %x\n", d[0].effective, d[1].effective, d[0].permitted,
		d[1].permitted);
}

int
main(int argc, char **argv)
{
	char c = 'x';
	struct iovec iov = {&c, 1};
	int i;
	long r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		errno = 0;
		if (strcmp(a, "socket-unix") == 0)
			r = try_socket(AF_UNIX, SOCK_STREAM);
		else if (strcmp(a, "socket-inet") == 0)
			r = try_socket(AF_INET, SOCK_STREAM);
		else if (strcmp(a, "socket-inet6") == 0)
			r = try_socket(AF_INET6, SOCK_STREAM);
		else if (strcmp(a, "socket-netlink") == 0)
			r = try_socket(AF_NETLINK, SOCK_RAW);
		else if (strcmp(a, "socket-packet") == 0)
			r = try_socket(AF_PACKET, SOCK_RAW);
		else if (strcmp(a, "socket-vsock") == 0)
			r = try_socket(AF_VSOCK, SOCK_STREAM);
		else if (strcmp(a, "socketpair-unix") == 0)
			r = try_socketpair();
		else if (strcmp(a, "socketpair-inet") == 0) {
			int sv[2];

			if ((r = socketpair(AF_INET, SOCK_STREAM, 0, sv)) == 0) {
				close(sv[0]);
				close(sv[1]);
			}
		} else if (strcmp(a, "io_uring_setup") == 0)
			r = syscall(__NR_io_uring_setup, 1, NULL); /* EFAULT when allowed */
		else if (strcmp(a, "ptrace") == 0)
			r = syscall(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, -1, 0, 0); /* ESRCH */
		else if (strcmp(a, "process_vm_readv") == 0)
			r = syscall(SYS_process_vm_readv, -1, &iov, 1, &iov, 1, 0); /* ESRCH */
		else if (strcmp(a, "tiocsti") == 0)
			r = ioctl(-1, TIOCSTI, &c); /* EBADF when allowed */
		else if (strcmp(a, "tioclinux") == 0)
			r = ioctl(-1, TIOCLINUX, &c);
		else if (strcmp(a, "mount") == 0) {
			/* fsopen needs CAP_SYS_ADMIN over our mount namespace, and changes nothing.
			 */
			if ((r = fsopen("tmpfs", FSOPEN_CLOEXEC)) >= 0)
				close((int)r);
		} else if (strcmp(a, "unshare-user") == 0)
			r = unshare(CLONE_NEWUSER);
		else if (strncmp(a, "connect-tcp:", 12) == 0)
			r = try_connect((int)strtol(a + 12, NULL, 10));
		else if (strcmp(a, "bind-tcp") == 0)
			r = try_bind();
		else if (strncmp(a, "connect-abstract:", 17) == 0)
			r = try_abstract(a + 17);
		else if (strncmp(a, "connect-unix:", 13) == 0)
			r = try_connect_unix(a + 13);
		else if (strncmp(a, "dgram-sendmsg:", 14) == 0)
			r = try_sendmsg("dgram", a + 14);
		else if (strncmp(a, "pair-sendmsg:", 13) == 0)
			r = try_sendmsg("pair", a + 13);
		else if (strncmp(a, "seqpacket-sendmsg:", 18) == 0)
			r = try_sendmsg("seqpacket", a + 18);
		else if (strncmp(a, "kill:", 5) == 0)
			r = kill((pid_t)strtol(a + 5, NULL, 10), 0);
		else if (strcmp(a, "nnp") == 0) {
			printf("nnp: = %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
			continue;
		} else if (strcmp(a, "caps") == 0) {
			print_caps();
			continue;
		} else if (strcmp(a, "i386") == 0)
			r = try_i386() > 0 ? 0 : -1;
		else if (strcmp(a, "x32") == 0)
			r = syscall(0x40000000 | SYS_getpid);
		else {
			fprintf(stderr, "try-syscall: unknown call %s\n", a);
			return 2;
		}
		report(a, r);
	}
	return 0;
}
