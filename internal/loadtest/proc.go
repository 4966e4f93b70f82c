package loadtest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/testenv/fixture"
)

// resetPeakRSS makes the kernel forget the peak resident memory of each process, so that
// peakRSS afterwards tells the peak since (Linux: "5" written to /proc/<pid>/clear_refs).
// Where that is not possible the peak stays the one since the process started, which can
// only be higher.
func resetPeakRSS(procs []*fixture.Server) {
	for _, p := range procs {
		_ = os.WriteFile("/proc/"+strconv.Itoa(p.PID())+"/clear_refs", []byte("5"), 0)
	}
}

// peakRSS is the largest peak resident memory (VmHWM) of procs in bytes, or 0 when it
// cannot be read.
func peakRSS(procs []*fixture.Server) int64 {
	var peak int64
	for _, p := range procs {
		if kb := statusKB(p.PID(), "VmHWM:"); kb*1024 > peak {
			peak = kb * 1024
		}
	}
	return peak
}

// statusKB reads one "Name:   123 kB" line of /proc/<pid>/status, or 0.
func statusKB(pid int, name string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ), 100 on Linux.
const clockTicks = 100

// cpuTime is the CPU time procs have used so far, user and system together; 0 when it
// cannot be read.
func cpuTime(procs []*fixture.Server) time.Duration {
	var total time.Duration
	for _, p := range procs {
		if _, t, ok := procCPU(strconv.Itoa(p.PID())); ok {
			total += t
		}
	}
	return total
}

// backendCPU is the CPU time used so far by every process named redis-server and by every
// one named postgres on this machine: what the local Redis and PostgreSQL spend. Other users
// of the same servers add to it, alike for every system, as the slices alternate.
func backendCPU() (redis, postgres time.Duration) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		switch name, t, _ := procCPU(e.Name()); name {
		case "redis-server":
			redis += t
		case "postgres":
			postgres += t
		}
	}
	return redis, postgres
}

// procCPU reads the command name and the user and system CPU time of one process.
func procCPU(pid string) (name string, cpu time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", 0, false
	}
	// The command name, in brackets, may hold spaces; the fields after it are fixed.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return s[open+1 : end], time.Duration(utime+stime) * time.Second / clockTicks, true
}
