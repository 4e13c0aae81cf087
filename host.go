package tidemark

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// DefaultHostID is the host identity of this process when none is given:
// hostname:pid. It names the process in the job's lease (store.Holder.Host)
// and in the run record (store.Run.Host).
func DefaultHostID() string {
	return hostname() + ":" + strconv.Itoa(os.Getpid())
}

// hostname is the machine's name, "localhost" if it has none.
func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// holderFor is the lease holder of one run (or reset) with host id hostID
// ("" for DefaultHostID).
func holderFor(id, hostID string, started time.Time) store.Holder {
	if hostID == "" {
		hostID = DefaultHostID()
	}
	return store.Holder{ID: id, Host: hostID, PID: os.Getpid(), Started: started.UTC()}
}

// sameMachine reports whether a lease holder ran on this machine, so that
// its process can be looked up by pid: it has this process's host id, the
// default id (hostname:pid) of this machine, or (an older tidemark's
// holder) the bare hostname.
func sameMachine(held store.Holder, hostID string) bool {
	if held.Host == hostID || held.Host == hostname() {
		return true
	}
	name, pid, ok := strings.Cut(held.Host, ":")
	return ok && name == hostname() && pid == strconv.Itoa(held.PID)
}

// HolderGone reports whether a lease holder was a process of this machine
// (as seen by a process with host id hostID, "" for DefaultHostID) that is
// gone (killed, crashed): its lease would expire anyway, and a run takes
// it over at once.
func HolderGone(held store.Holder, hostID string) bool {
	if hostID == "" {
		hostID = DefaultHostID()
	}
	return sameMachine(held, hostID) && held.PID != os.Getpid() && !processAlive(held.PID)
}
