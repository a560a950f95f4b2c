/*
 * The PTY a command runs on: a pair opened with an explicit termios (the kernel's
 * tty_std_termios plus IUTF8) and size, both ends close-on-exec, the slave found without a
 * path lookup where the kernel allows; and its window size later.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "spawn.h"
#include "spawn_int.h"

/* Fill t with a cooked terminal: the kernel's tty_std_termios plus IUTF8. */
static void
spawn_pty_termios(struct termios *t)
{
	memset(t, 0, sizeof *t);
	t->c_iflag = ICRNL | IXON | IUTF8;
	t->c_oflag = OPOST | ONLCR;
	t->c_cflag = CS8 | CREAD | HUPCL;
	t->c_lflag = ICANON | ISIG | IEXTEN | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE;
	t->c_cc[VINTR] = 0x03;	  /* ^C */
	t->c_cc[VQUIT] = 0x1c;	  /* ^\ */
	t->c_cc[VERASE] = 0x7f;	  /* DEL */
	t->c_cc[VKILL] = 0x15;	  /* ^U */
	t->c_cc[VEOF] = 0x04;	  /* ^D */
	t->c_cc[VSTART] = 0x11;	  /* ^Q */
	t->c_cc[VSTOP] = 0x13;	  /* ^S */
	t->c_cc[VSUSP] = 0x1a;	  /* ^Z */
	t->c_cc[VREPRINT] = 0x12; /* ^R */
	t->c_cc[VWERASE] = 0x17;  /* ^W */
	t->c_cc[VLNEXT] = 0x16;	  /* ^V */
	t->c_cc[VDISCARD] = 0x0f; /* ^O */
	t->c_cc[VEOL] = _POSIX_VDISABLE;
	t->c_cc[VEOL2] = _POSIX_VDISABLE;
	t->c_cc[VMIN] = 1;
	t->c_cc[VTIME] = 0;
	cfsetispeed(t, B38400);
	cfsetospeed(t, B38400);
}

/* Open a PTY pair, both close-on-exec, with our termios and size; 0 or -errno. */
int
spawn_pty_open(unsigned short rows, unsigned short cols, int *masterp, int *slavep)
{
	struct termios t;
	struct winsize ws;
	char name[64];
	int m = -1, s = -1, r = -1;

	if ((m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 || grantpt(m) == -1 ||
		unlockpt(m) == -1)
		goto fail;
	/* TIOCGPTPEER opens the slave without a path lookup (Linux 4.13). */
	if ((s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
		if ((errno = ptsname_r(m, name, sizeof name)) != 0)
			goto fail;
		if ((s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)
			goto fail;
	}
	spawn_pty_termios(&t);
	if (tcsetattr(s, TCSANOW, &t) == -1)
		goto fail;
	memset(&ws, 0, sizeof ws);
	ws.ws_row = rows != 0 ? rows : SPAWN_DEFAULT_ROWS;
	ws.ws_col = cols != 0 ? cols : SPAWN_DEFAULT_COLS;
	if (ioctl(m, TIOCSWINSZ, &ws) == -1)
		goto fail;
	if ((r = spawn_fd_high(&m)) != 0 || (r = spawn_fd_high(&s)) != 0 ||
		(r = spawn_set_nonblock(m)) != 0)
		goto out;
	*masterp = m;
	*slavep = s;
	return 0;
fail:
	r = -errno;
out:
	spawn_close(&m);
	spawn_close(&s);
	return r;
}

/* Set the window size of a PTY master; 0 or -errno. */
int
spawn_pty_resize(int pty_fd, unsigned short rows, unsigned short cols)
{
	struct winsize ws;

	if (pty_fd < 0 || rows == 0 || cols == 0)
		return -EINVAL;
	memset(&ws, 0, sizeof ws);
	ws.ws_row = rows;
	ws.ws_col = cols;
	if (ioctl(pty_fd, TIOCSWINSZ, &ws) == -1)
		return -errno;
	return 0;
}
