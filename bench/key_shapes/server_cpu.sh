# shellcheck shell=bash
# Sourced by postgres_shapes.sh and mysql_shapes.sh: the CPU seconds a local database
# server has used so far, read from /proc, so a run's server CPU per operation is the
# difference of two readings. CPU time rather than wall time: on a shared machine the
# rates move with the neighbours' load far more than the work per operation does.
#
#   postgres_cpu_seconds POSTMASTER_PID   the postmaster, its children (backends, WAL
#                                         writer, ...) and the children it has reaped
#   process_cpu_seconds PID               one process (mariadbd)

postgres_cpu_seconds() {
  python3 - "$1" <<'PY'
import os, sys
postmaster = sys.argv[1]
ticks = os.sysconf('SC_CLK_TCK')
total = 0
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    try:
        stat = open(f'/proc/{pid}/stat').read()
    except OSError:
        continue
    fields = stat[stat.rindex(')') + 2:].split()
    if pid == postmaster:  # utime, stime, cutime, cstime: reaped backends included
        total += sum(int(x) for x in fields[11:15])
    elif fields[1] == postmaster:
        total += int(fields[11]) + int(fields[12])
print(total / ticks)
PY
}

process_cpu_seconds() {
  python3 -c "
import os
stat = open('/proc/$1/stat').read()
fields = stat[stat.rindex(')') + 2:].split()
print((int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK'))"
}
