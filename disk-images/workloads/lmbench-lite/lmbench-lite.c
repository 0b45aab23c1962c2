// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lmbench-lite: the operating-system microbenchmarks of seed 004 (lmbench's
 * lat_proc, lat_pipe, lat_ctx, lat_syscall, lat_sig), each a fixed number of
 * iterations so that the work does not depend on the clock:
 *
 *   fork     fork + exit + wait
 *   exec     fork + exec(/bin/true) + wait
 *   pipe     round trip of one byte between two processes over two pipes
 *   ctx      context switch: N processes pass a token around a ring of pipes
 *   null     getppid(), the null system call
 *   segv     SIGSEGV delivered (write to a read-only page) and returned from
 *   fpe      SIGFPE delivered (integer divide by zero) and returned from
 *
 *   lmbench-lite TEST ITERATIONS [PROCESSES]
 *
 * prints one JSON object: the test, its iterations and the system calls it
 * made, counted by the program itself.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long syscalls;

static void die(const char *what)
{
	fprintf(stderr, "lmbench-lite: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void wait_child(pid_t pid)
{
	int status;

	syscalls++;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child did not exit cleanly");
}

static void bench_fork(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		syscalls++;
		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		wait_child(pid);
	}
}

static void bench_exec(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		syscalls++;
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		syscalls++; /* the child's execve */
		wait_child(pid);
	}
}

static void xpipe(int fd[2])
{
	syscalls++;
	if (pipe(fd))
		die("pipe");
}

static void xread(int fd)
{
	char c;

	syscalls++;
	if (read(fd, &c, 1) != 1)
		die("read");
}

static void xwrite(int fd)
{
	syscalls++;
	if (write(fd, "x", 1) != 1)
		die("write");
}

/* Process i reads from ring[i] and writes to ring[(i+1) % procs]; the token
 * goes around the ring n times.  With 2 processes this is lat_pipe. */
static void bench_ring(long n, int procs)
{
	int ring[64][2];
	pid_t pids[64];

	if (procs < 2 || procs > 64) {
		fprintf(stderr, "lmbench-lite: processes must be 2..64\n");
		exit(2);
	}
	for (int i = 0; i < procs; i++)
		xpipe(ring[i]);
	for (int i = 1; i < procs; i++) {
		pids[i] = fork();
		syscalls++;
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			for (long k = 0; k < n; k++) {
				xread(ring[i][0]);
				xwrite(ring[(i + 1) % procs][1]);
			}
			_exit(0);
		}
	}
	for (long k = 0; k < n; k++) {
		xwrite(ring[1][1]);
		xread(ring[0][0]);
	}
	/* The children's reads and writes: counted here, as they exit. */
	syscalls += 2 * n * (procs - 1);
	for (int i = 1; i < procs; i++)
		wait_child(pids[i]);
}

static void bench_null(long n)
{
	for (long i = 0; i < n; i++) {
		getppid();
		syscalls++;
	}
}

static sigjmp_buf resume;
static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	(void)sig;
	caught++;
	siglongjmp(resume, 1);
}

static void catch(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	syscalls++;
	if (sigaction(sig, &sa, NULL))
		die("sigaction");
}

static void bench_segv(long n)
{
	volatile char *page;

	syscalls++;
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	catch(SIGSEGV);
	for (long i = 0; i < n; i++) {
		if (sigsetjmp(resume, 1) == 0)
			page[0] = 1;
		/* sigsetjmp saves, siglongjmp restores the mask: one rt_sigprocmask each. */
		syscalls += 2;
	}
}

static void bench_fpe(long n)
{
	volatile int zero = 0, x = 1;

	catch(SIGFPE);
	for (long i = 0; i < n; i++) {
		if (sigsetjmp(resume, 1) == 0)
			x = x / zero;
		syscalls += 2;
	}
}

int main(int argc, char **argv)
{
	static const char *const tests[] = { "fork", "exec", "pipe", "ctx", "null", "segv", "fpe" };
	const char *test = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int procs = argc > 3 ? atoi(argv[3]) : 2;

	if (n <= 0) {
		fprintf(stderr, "usage: lmbench-lite fork|exec|pipe|ctx|null|segv|fpe ITERATIONS [PROCESSES]\n");
		return 2;
	}
	if (!strcmp(test, "fork"))
		bench_fork(n);
	else if (!strcmp(test, "exec"))
		bench_exec(n);
	else if (!strcmp(test, "pipe"))
		bench_ring(n, 2);
	else if (!strcmp(test, "ctx"))
		bench_ring(n, procs);
	else if (!strcmp(test, "null"))
		bench_null(n);
	else if (!strcmp(test, "segv"))
		bench_segv(n);
	else if (!strcmp(test, "fpe"))
		bench_fpe(n);
	else {
		fprintf(stderr, "lmbench-lite: unknown test '%s'; known:", test);
		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			fprintf(stderr, " %s", tests[i]);
		fprintf(stderr, "\n");
		return 2;
	}
	if ((!strcmp(test, "segv") || !strcmp(test, "fpe")) && caught != n) {
		fprintf(stderr, "lmbench-lite: %ld signals caught, expected %ld\n", (long)caught, n);
		return 1;
	}
	printf("{\"test\":\"%s\",\"iterations\":%ld,\"syscalls\":%ld}\n", test, n, syscalls);
	return 0;
}
