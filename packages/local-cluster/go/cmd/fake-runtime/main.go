// Command fake-runtime serves upstream's fake container runtime (k8s.io/cri-client/pkg/fake, the
// one the kubelet's own tests use) on a Unix socket, so a real kubelet runs pods on a machine with
// no container engine: every sandbox and container "runs", every image "pulls". It adds one thing:
// each CreateContainer request is appended as a JSON line to --record, so tests can assert what the
// kubelet's device manager and DRA manager put into the container (env, devices, mounts, CDI
// devices, annotations).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	kubeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

// recordingRuntime is the fake runtime with CreateContainer recorded, and a log file per container.
type recordingRuntime struct {
	*fake.RemoteRuntime
	mu     sync.Mutex
	record *os.File
	// logPaths: container ID → its log file. The fake reports no log path, and the kubelet's log
	// manager then removes every match of the glob "*" in its working directory when a container
	// goes (container_log_manager.go Clean: pattern LogPath + "*"): a real runtime always has one.
	logPaths map[string]string
}

// logPath is where a runtime writes a container's log: the sandbox's log directory joined with the
// container's log path (both set by the kubelet).
func logPath(req *kubeapi.CreateContainerRequest) string {
	dir := req.GetSandboxConfig().GetLogDirectory()
	rel := req.GetConfig().GetLogPath()
	if dir == "" || rel == "" {
		return ""
	}
	return filepath.Join(dir, rel)
}

func (r *recordingRuntime) ContainerStatus(ctx context.Context, req *kubeapi.ContainerStatusRequest) (*kubeapi.ContainerStatusResponse, error) {
	resp, err := r.RemoteRuntime.ContainerStatus(ctx, req)
	if err == nil && resp.GetStatus() != nil && resp.Status.LogPath == "" {
		r.mu.Lock()
		resp.Status.LogPath = r.logPaths[req.ContainerId]
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recordingRuntime) RemoveContainer(ctx context.Context, req *kubeapi.RemoveContainerRequest) (*kubeapi.RemoveContainerResponse, error) {
	resp, err := r.RemoteRuntime.RemoveContainer(ctx, req)
	if err == nil {
		r.mu.Lock()
		delete(r.logPaths, req.ContainerId)
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recordingRuntime) CreateContainer(ctx context.Context, req *kubeapi.CreateContainerRequest) (*kubeapi.CreateContainerResponse, error) {
	resp, err := r.RemoteRuntime.CreateContainer(ctx, req)
	if path := logPath(req); err == nil && path != "" {
		// An empty log, as a container that printed nothing has: `kubectl logs` reads it.
		if mkErr := os.MkdirAll(filepath.Dir(path), 0o755); mkErr == nil {
			if f, createErr := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o640); createErr == nil {
				_ = f.Close()
			}
		}
		r.mu.Lock()
		r.logPaths[resp.ContainerId] = path
		r.mu.Unlock()
	}
	if r.record != nil {
		body, merr := protojson.MarshalOptions{UseProtoNames: false}.Marshal(req)
		if merr == nil {
			line := map[string]json.RawMessage{"request": body}
			if resp != nil {
				id, _ := json.Marshal(resp.ContainerId)
				line["containerId"] = id
			}
			if err != nil {
				msg, _ := json.Marshal(err.Error())
				line["error"] = msg
			}
			out, _ := json.Marshal(line)
			r.mu.Lock()
			_, _ = r.record.Write(append(out, '\n'))
			r.mu.Unlock()
		}
	}
	return resp, err
}

func main() {
	listen := flag.String("listen", "", "Unix socket path to serve the CRI runtime and image services on")
	record := flag.String("record", "", "file to append each CreateContainer request to, one JSON line each")
	flag.Parse()
	if *listen == "" {
		fmt.Fprintln(os.Stderr, "fake-runtime: --listen is required")
		os.Exit(2)
	}
	_ = os.Remove(*listen)
	l, err := net.Listen("unix", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake-runtime: listen %s: %v\n", *listen, err)
		os.Exit(1)
	}
	rt := &recordingRuntime{RemoteRuntime: fake.NewFakeRemoteRuntime(), logPaths: map[string]string{}}
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-runtime: open %s: %v\n", *record, err)
			os.Exit(1)
		}
		rt.record = f
	}
	// What fake.RemoteRuntime.Start does, on a server of our own so that CreateContainer is ours.
	rt.RuntimeService.FakeStatus = &kubeapi.RuntimeStatus{Conditions: []*kubeapi.RuntimeCondition{
		{Type: kubeapi.RuntimeReady, Status: true},
		{Type: kubeapi.NetworkReady, Status: true},
	}}
	// The kubelet refuses an image whose size is 0 ("Id or size of image … is not set"); the fake
	// pulls every image with FakeImageSize, which defaults to 0.
	rt.ImageService.SetFakeImageSize(1 << 20)
	server := grpc.NewServer()
	kubeapi.RegisterRuntimeServiceServer(server, rt)
	kubeapi.RegisterImageServiceServer(server, rt)

	// The fake services append every call's name to Called and never drop them; the kubelet polls
	// several times a second, so forget them now and then to keep a long-running node's memory flat.
	go func() {
		for range time.Tick(time.Minute) {
			rt.RuntimeService.Lock()
			rt.RuntimeService.Called = rt.RuntimeService.Called[:0]
			rt.RuntimeService.Unlock()
			rt.ImageService.Lock()
			rt.ImageService.Called = rt.ImageService.Called[:0]
			rt.ImageService.Unlock()
		}
	}()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		server.Stop()
		_ = os.Remove(*listen)
		os.Exit(0)
	}()
	fmt.Fprintf(os.Stderr, "fake-runtime: serving on %s\n", *listen)
	if err := server.Serve(l); err != nil {
		fmt.Fprintf(os.Stderr, "fake-runtime: %v\n", err)
		os.Exit(1)
	}
}
