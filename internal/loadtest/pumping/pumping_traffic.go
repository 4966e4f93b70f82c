package pumping

import (
	"fmt"
	"math"
	mathrand "math/rand/v2"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// country is one country of the legitimate background traffic.
type country struct {
	region string
	// weight is its share of the legitimate sends; approval the share of its users who
	// enter their code.
	weight, approval float64
}

// countries are the background traffic's countries: shares of a typical international app,
// approval rates between 60 % and 95 %.
func countries() []country {
	return []country{
		{"JP", 0.22, 0.92}, {"US", 0.18, 0.85}, {"GB", 0.10, 0.88}, {"DE", 0.09, 0.90}, {"FR", 0.08, 0.86},
		{"IN", 0.10, 0.70}, {"BR", 0.08, 0.75}, {"ID", 0.06, 0.65}, {"MX", 0.05, 0.80}, {"NG", 0.04, 0.60},
	}
}

// numbers hands out valid mobile numbers, never the same twice, so that no legitimate send is
// refused by the phone rule for a number another user drew.
type numbers struct {
	mu   sync.Mutex
	rnd  *mathrand.Rand
	used map[string]bool
	// bases holds per region the E.164 form of an example mobile number.
	bases map[string]string
}

func newNumbers(seed uint64) *numbers {
	n := &numbers{rnd: mathrand.New(mathrand.NewPCG(seed, 1)), used: map[string]bool{}, bases: map[string]string{}}
	for _, c := range countries() {
		ex := phonenumbers.GetExampleNumberForType(c.region, phonenumbers.MOBILE)
		n.bases[c.region] = phonenumbers.Format(ex, phonenumbers.E164)
	}
	return n
}

// valid reports whether e164 is a valid number.
func valid(e164 string) bool {
	p, err := phonenumbers.Parse(e164, "")
	return err == nil && phonenumbers.IsValidNumber(p)
}

// random returns a fresh valid number of region: its example mobile number with the last
// seven digits drawn.
func (n *numbers) random(region string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	base, ok := n.bases[region]
	if !ok {
		ex := phonenumbers.GetExampleNumberForType(region, phonenumbers.MOBILE)
		base = phonenumbers.Format(ex, phonenumbers.E164)
		n.bases[region] = base
	}
	for {
		s := base[:len(base)-7] + fmt.Sprintf("%07d", n.rnd.IntN(10_000_000))
		if !n.used[s] && valid(s) {
			n.used[s] = true
			return s
		}
	}
}

// prefix returns a random prefix of region's valid numbers, drop digits short of a number:
// an "expensive range" for the attack.
func (n *numbers) prefix(region string, drop int) string {
	s := n.random(region)
	return s[:len(s)-drop]
}

// inPrefix returns a valid number of the prefix with its last drop digits drawn (an attacker
// does not mind repeating a number).
func (n *numbers) inPrefix(prefix string, drop int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for range 100 {
		s := prefix + fmt.Sprintf("%0*d", drop, n.rnd.IntN(int(math.Pow10(drop))))
		if valid(s) {
			return s
		}
	}
	return prefix + fmt.Sprintf("%0*d", drop, 0)
}

// addresses hands out client addresses. Legitimate clients each get an address of their
// own, spread over the /24s of 100.64.0.0/10 (consecutive users land in different networks,
// as they would), except a share behind a few carrier NATs, whose /24s carry many users.
// The attacker rotates a fixed pool spread over several /16s.
type addresses struct {
	mu     sync.Mutex
	rnd    *mathrand.Rand
	next   int
	natN   []int
	attack []string
	// proxies counts the /24s fresh24 handed out.
	proxies int
}

// Shape of the address plan.
const (
	carrierNATs = 20
	natShare    = 0.15
)

func newAddresses(seed uint64, attackIPs int) *addresses {
	a := &addresses{rnd: mathrand.New(mathrand.NewPCG(seed, 2)), natN: make([]int, carrierNATs)}
	a.next = a.rnd.IntN(1 << 20)
	nets := []string{"45.12", "45.13", "91.204", "185.23"}
	seen := map[string]bool{}
	for len(a.attack) < attackIPs {
		ip := fmt.Sprintf("%s.%d.%d", nets[len(a.attack)%len(nets)], a.rnd.IntN(256), 1+a.rnd.IntN(254))
		if !seen[ip] {
			seen[ip] = true
			a.attack = append(a.attack, ip)
		}
	}
	return a
}

// legit returns the address of a new legitimate client.
func (a *addresses) legit() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rnd.Float64() < natShare {
		k := a.rnd.IntN(carrierNATs)
		a.natN[k]++
		return "172.20." + strconv.Itoa(k) + "." + strconv.Itoa(a.natN[k]%254+1)
	}
	n := a.next
	a.next++
	// 2^14 networks of 100.64.0.0/10, visited in a scrambled order before any repeats.
	net := (n * 40503) % (1 << 14)
	host := (n/(1<<14))%254 + 1
	return fmt.Sprintf("100.%d.%d.%d", 64+net>>8, net&255, host)
}

// attacker returns the n-th address of the attacker's rotation.
func (a *addresses) attacker(n int) string { return a.attack[n%len(a.attack)] }
