# Runs a shell command on a pseudo-terminal, as a teacher's terminal would, then lets the shell
# read one more line from that terminal and run it, as an interactive shell would: anything a
# program pushed into the terminal's input (TIOCSTI) is run there, and shown as READ:[...].
# Prints everything the terminal showed.
#   pty_run.py DIR COMMAND       (COMMAND runs under bash -c in DIR)
import os
import pty
import select
import sys

directory, command = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(directory)
    os.execv("/bin/bash", ["bash", "-c", command + '; read -t 1 line && eval "$line"; echo "READ:[$line]"'])
out = b""
while True:
    ready, _, _ = select.select([fd], [], [], 120)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
