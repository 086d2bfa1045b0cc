// A starter bot for the arena (protocol v1, docs/protocol.md) in Go, standard library only.
//
//	go run . -port 9006 -secret S      (or PORT and ARENA_BOT_SECRET in the environment)
//
// It answers every game with a uniformly random legal action. Edit chooseAction to make it smarter.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const maxBody = 4 << 20

var games = []string{"piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced", "pajarracos"}

// Request is the part of a /start, /act or /end body this bot reads; see docs/protocol.md.
type Request struct {
	MatchID      string            `json:"match_id"`
	Game         string            `json:"game"`
	Seat         int               `json:"seat"`
	Turn         int               `json:"turn"`
	Decision     string            `json:"decision"`
	View         json.RawMessage   `json:"view"`
	LegalActions []json.RawMessage `json:"legal_actions"`
}

// chooseAction is your strategy: answer one of the legal actions, unchanged (kept as raw JSON).
func chooseAction(req *Request) json.RawMessage {
	return req.LegalActions[rand.Intn(len(req.LegalActions))]
}

type bot struct {
	secret   string
	mu       sync.Mutex
	lastTurn map[string]int  // last /act turn per match and seat: older or repeated turns are stale
	ended    map[string]bool // matches that ended: none of their turns is answered again
	order    []string        // ended matches, oldest first (the newest 4096 are kept)
}

// routeKeys: what only each route's body carries. The signature covers the body, not the path: a
// captured /act or /start body posted to /end would otherwise make the bot forget a running match's turns.
var routeKeys = map[string]string{"/start": "time_controls", "/act": "legal_actions", "/end": "result"}

func (b *bot) bodyFitsRoute(route string, body []byte) bool {
	want, known := routeKeys[route]
	if b.secret == "" || !known {
		return true
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return false
	}
	if _, ok := fields[want]; !ok {
		return false
	}
	for path, key := range routeKeys {
		if _, ok := fields[key]; ok && path != route {
			return false
		}
	}
	return true
}

func (b *bot) validSignature(body []byte, header string) bool {
	if b.secret == "" {
		return true
	}
	mac := hmac.New(sha256.New, []byte(b.secret))
	mac.Write(body)
	expected := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(header), []byte(expected))
}

func (b *bot) freshTurn(req *Request, header string) bool {
	if strconv.Itoa(req.Turn) != header {
		return false
	}
	key := req.MatchID + "/" + strconv.Itoa(req.Seat)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.secret != "" && b.ended[req.MatchID] {
		return false
	}
	if last, seen := b.lastTurn[key]; seen && req.Turn <= last {
		return false
	}
	b.lastTurn[key] = req.Turn
	return true
}

func (b *bot) forget(matchID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.lastTurn {
		if strings.HasPrefix(key, matchID+"/") {
			delete(b.lastTurn, key)
		}
	}
	if !b.ended[matchID] {
		b.ended[matchID] = true
		b.order = append(b.order, matchID)
		if len(b.order) > 4096 {
			delete(b.ended, b.order[0])
			b.order = b.order[1:]
		}
	}
}

// reply sends headers and body in one write: net/http buffers both and sets Content-Length.
func reply(w http.ResponseWriter, status int, payload any) {
	body, _ := json.Marshal(payload)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func (b *bot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/" {
		reply(w, 200, map[string]any{"apiversion": "1", "name": "starter-go", "author": "you", "version": "1",
			"games": games})
		return
	}
	if r.Method != http.MethodPost {
		reply(w, 404, map[string]string{"error": "not found"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		reply(w, 413, map[string]string{"error": "request too large"})
		return
	}
	if !b.validSignature(body, r.Header.Get("X-Arena-Signature")) {
		reply(w, 401, map[string]string{"error": "bad signature"})
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		reply(w, 400, map[string]string{"error": "body is not JSON"})
		return
	}
	if !b.bodyFitsRoute(r.URL.Path, body) {
		reply(w, 400, map[string]string{"error": "the body is for another route"})
		return
	}
	switch r.URL.Path {
	case "/act":
		if !b.freshTurn(&req, r.Header.Get("X-Arena-Turn")) {
			reply(w, 409, map[string]string{"error": "stale or replayed turn"})
			return
		}
		reply(w, 200, map[string]json.RawMessage{"action": chooseAction(&req)})
	case "/start":
		reply(w, 200, map[string]bool{"ok": true})
	case "/end":
		b.forget(req.MatchID)
		reply(w, 200, map[string]bool{"ok": true})
	default:
		reply(w, 404, map[string]string{"error": "not found"})
	}
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "9006"
	}
	host := flag.String("host", "127.0.0.1", "address to listen on")
	portFlag := flag.String("port", port, "port to listen on")
	secret := flag.String("secret", os.Getenv("ARENA_BOT_SECRET"), "verify request signatures with this secret")
	flag.Parse()
	rand.Seed(time.Now().UnixNano())
	addr := *host + ":" + *portFlag
	// Go sets TCP_NODELAY on every connection and keeps connections alive by default.
	server := &http.Server{Addr: addr, Handler: &bot{secret: *secret, lastTurn: map[string]int{}, ended: map[string]bool{}},
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Printf("starter-go bot listening on http://%s (signatures %v)\n", addr, *secret != "")
	log.Fatal(server.ListenAndServe())
}
