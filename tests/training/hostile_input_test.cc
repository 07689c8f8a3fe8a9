// Hostile flags, data files and checkpoints (issue #25, item 7): each is refused with one line naming what and
// where, exit 2, before anything is allocated; never a crash, a hang or a silent wrong run.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include "tests/training/ranks.h"

namespace shardscope::test {
namespace {

namespace fs = std::filesystem;

// One rank with `args`; its stderr must be one line holding `message`. Refused at once shows in the exit code and
// the line, not in a time bound (which a loaded machine would break): a run that went ahead instead would fail,
// train (0), or be killed by wait_ranks (-1).
std::string expect_refused(const std::vector<std::string>& args, const std::string& message) {
  TempDir dir;
  auto ranks = start_ranks(1, args, dir.path());
  wait_ranks(ranks, std::chrono::seconds(60));
  const std::string err = ranks[0].stderr_text();
  EXPECT_EQ(ranks[0].rc, 2) << err;  // -1: it hung and was killed
  EXPECT_NE(err.find(message), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.find("json.exception"), std::string::npos) << err;
  EXPECT_EQ(err.find("filesystem error"), std::string::npos) << err;
  EXPECT_LE(err.size(), 301u) << err;  // every line the trainer prints: at most 300 characters and its newline
  return err;
}

// Today the unit table for 1e11 layers is built first (std::bad_alloc after seconds); the counts now come
// from checked arithmetic and the memory check refuses the shape at once.
TEST(HostileFlags, AnAbsurdLayerCountIsRefusedByTheMemoryCheck) {
  expect_refused({"--layers", "99999999999"}, "this run needs about");
}

// The activation formula does not read --ffn-dim: this shape tried a 65.5 GB tensor (at --batch-size 64) and
// was reported as "a collective failed". The FFN's intermediates are now counted before anything is allocated.
TEST(HostileFlags, AnAbsurdFfnWidthIsRefusedByTheMemoryCheck) {
  const std::string err = expect_refused({"--steps", "1", "--dim", "2", "--heads", "1", "--kv-heads", "1", "--ffn-dim",
                                          "1000000", "--seq-len", "256", "--batch-size", "640"},
                                         "the FFN's intermediates at --ffn-dim 1000000");
  EXPECT_NE(err.find("this run needs about"), std::string::npos) << err;
  EXPECT_NE(err.find("try a smaller --ffn-dim"), std::string::npos) << err;
  // Counts past int64 are refused by name as the other counts are.
  expect_refused({"--layers", "1", "--dim", "2", "--heads", "1", "--kv-heads", "1", "--ffn-dim", "1000000000000000000",
                  "--seq-len", "64"},
                 "--ffn-dim 1000000000000000000, --seq-len 64, --batch-size 2, --layers 1: the FFN's activation count "
                 "does not fit in 64 bits");
}

TEST(HostileFlags, CountsBeyond64BitsAreRefusedNotPassedToLibtorch) {
  expect_refused({"--dim", "2000000000000000000"},
                 "--dim 2000000000000000000, --ffn-dim 344, --vocab 256: the parameter count does not fit in 64 bits");
  expect_refused({"--seq-len", "4000000000000"}, "the activation count does not fit in 64 bits");
}

TEST(HostileFlags, ThreadsAreBoundedByTheMachine) {
  expect_refused({"--threads", "100000"}, "--threads must be at most ");
}

TEST(HostileFlags, NumbersMustBeFiniteAndSentinelsAreNotValues) {
  expect_refused({"--lr", "inf"}, "--lr must be a finite number (got inf)");
  expect_refused({"--lr", "nan"}, "--lr must be greater than 0 (got nan)");
  expect_refused({"--max-grad-norm", "inf"}, "--max-grad-norm must be a finite number (got inf)");
  expect_refused({"--stop-after", "-1"}, "--stop-after must be at least 1 (got -1)");
  expect_refused({"--warmup", "-1"}, "--warmup must be at least 0 (got -1)");
  expect_refused({"--ranks-per-node", "-3"}, "--ranks-per-node must be at least 1 (got -3)");
  expect_refused({"--rendezvous-timeout", "100000000"}, "--rendezvous-timeout must be at most 86400 (got 100000000)");
}

// 1e300 is a double but inf as the optimizer's float: it failed in the first step as "a collective failed".
TEST(HostileFlags, LearningRateMustFitAFloat) {
  expect_refused({"--lr", "1e300"}, "--lr must be at most 3.40282e+38, a float's range (got 1e+300)");
  expect_refused({"--lr", "3.5e38"}, "--lr must be at most 3.40282e+38");
}

// These were stored as UINT64_MAX and the run went on (exit 0).
TEST(HostileFlags, SeedIsAWholeNumberIn64Bits) {
  const std::string range = "--seed must be a whole number from 0 to 18446744073709551615 (got ";
  expect_refused({"--seed", "-1"}, range + "-1)");
  expect_refused({"--seed", "18446744073709551616"}, range + "18446744073709551616)");
  expect_refused({"--seed", "1e20"}, range + "1e20)");
  expect_refused({"--seed", "+3"}, range + "+3)");
  expect_refused({"--seed", ""}, range + ")");
  TempDir dir;
  auto r =
      run_ranks(1, {"--steps", "1", "--seed", "18446744073709551615", "--log-json", (dir.path() / "log.json").string()},
                dir.path());
  ASSERT_EQ(r[0].rc, 0) << r[0].stderr_text();
}

// A log that cannot be written ended the run with exit 0 and no word; now one line naming the file.
TEST(HostileFlags, AnUnwritableLogIsAnError) {
  expect_refused({"--steps", "1", "--log-json", "/dev/full"}, "--log-json /dev/full: cannot write");
}

// A checkpoint folder that is a file failed only after training, as "a collective failed".
TEST(HostileFlags, CheckpointDirMustBeAFolder) {
  TempDir dir;
  const fs::path file = dir.path() / "file";
  std::ofstream(file) << "x";
  expect_refused({"--steps", "1", "--checkpoint-dir", "/dev/null"}, "--checkpoint-dir /dev/null is not a folder");
  expect_refused({"--steps", "1", "--checkpoint-dir", file.string()},
                 "--checkpoint-dir " + file.string() + " is a file, not a folder");
  expect_refused({"--steps", "1", "--checkpoint-dir", (file / "sub").string()},
                 "--checkpoint-dir " + (file / "sub").string() + ": cannot create the folder");
  // A missing one is made up front.
  auto r = run_ranks(1, {"--steps", "1", "--checkpoint-dir", (dir.path() / "new" / "ckpt").string()}, dir.path());
  ASSERT_EQ(r[0].rc, 0) << r[0].stderr_text();
  EXPECT_TRUE(fs::exists(dir.path() / "new" / "ckpt" / "step_0" / "meta.json"));
}

// A file named by --trace-dir printed "filesystem error: ..." (issue #40); it is now refused with the flags.
TEST(HostileFlags, TraceDirMustBeAFolder) {
  TempDir dir;
  const fs::path file = dir.path() / "file";
  std::ofstream(file) << "x";
  expect_refused({"--steps", "1", "--trace-dir", file.string()},
                 "--trace-dir " + file.string() + " is a file, not a folder");
  expect_refused({"--steps", "1", "--trace-dir", "/dev/null"}, "--trace-dir /dev/null is not a folder");
  expect_refused({"--steps", "1", "--trace-dir", (file / "sub").string()},
                 "--trace-dir " + (file / "sub").string() + ": cannot create the folder (Not a directory)");
  EXPECT_EQ(Rank::slurp(file), "x");  // left as it was
}

// A path of 500 characters: the line keeps the flag at its start and what went wrong at its end, within 300.
TEST(HostileFlags, ALongPathStillGivesALineOfAtMost300Characters) {
  const std::string path = "/nonexistent/" + std::string(487, 'p');
  const std::string err = expect_refused({"--data", path}, "shardscope-train: error: --data /nonexistent/ppp");
  EXPECT_NE(err.find(" ... "), std::string::npos) << err;
  EXPECT_NE(err.find("ppp: cannot open the file (No such file or directory)\n"), std::string::npos) << err;
}

TEST(HostileData, OnlyARegularFileIsRead) {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused({"--data", fifo.string()}, "--data " + fifo.string() + " is a FIFO, not a regular file");
  expect_refused({"--data", "/dev/zero"}, "--data /dev/zero is a device, not a regular file");
  expect_refused({"--data", "/dev/urandom"}, "--data /dev/urandom is a device, not a regular file");
  expect_refused({"--data", dir.path().string()}, "--data " + dir.path().string() + " is a folder, not a regular file");
}

// A real checkpoint (tiny, 2 steps) for each test below to copy and damage.
class HostileCheckpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    source_ = new TempDir;
    auto r =
        run_ranks(1, {"--steps", "2", "--save-every", "1", "--checkpoint-dir", (source_->path() / "ckpt").string()},
                  source_->path());
    ASSERT_EQ(r[0].rc, 0) << r[0].stderr_text();
  }
  static void TearDownTestSuite() { delete source_; }
  void SetUp() override { fs::copy(source_->path() / "ckpt", ckpt(), fs::copy_options::recursive); }

  fs::path ckpt() const { return dir_.path() / "ckpt"; }
  fs::path meta() const { return ckpt() / "step_1" / "meta.json"; }
  void write_meta(const std::string& text) const { std::ofstream(meta(), std::ios::trunc) << text; }
  // The real meta.json with `edit` applied.
  template <class F>
  void edit_meta(F edit) const {
    nlohmann::json m = read_meta();
    edit(m);
    write_meta(m.dump());
  }
  nlohmann::json read_meta() const {
    std::ifstream in(meta());
    return nlohmann::json::parse(in);
  }
  std::string resume_refused(const std::string& message) const {
    return expect_refused({"--steps", "2", "--resume", "--checkpoint-dir", ckpt().string()}, message);
  }

  TempDir dir_;
  static TempDir* source_;
};
TempDir* HostileCheckpoint::source_ = nullptr;

TEST_F(HostileCheckpoint, UndamagedResumes) {
  auto r = run_ranks(1, {"--steps", "3", "--resume", "--checkpoint-dir", ckpt().string()}, dir_.path());
  EXPECT_EQ(r[0].rc, 0) << r[0].stderr_text();
  EXPECT_NE(r[0].stdout_text().find("resuming at step 2"), std::string::npos) << r[0].stdout_text();
}

TEST_F(HostileCheckpoint, DamagedMetaIsOneLineNamingTheFileAndKey) {
  write_meta("{\"step\": 1, \"config\": ");
  resume_refused(meta().string() + ": not valid JSON: parse error at line 1");
  write_meta("[1, 2]");
  resume_refused(meta().string() + ": expected a JSON object, got array");
  write_meta("{\"step\": \"one\", \"config\": {}}");
  resume_refused(meta().string() + ": key 'step': expected a non-negative integer (got \"one\")");
  write_meta("{\"step\": 7, \"config\": {}}");
  resume_refused(meta().string() + ": key 'step': 7, but the folder is step_1");
  write_meta("{\"step\": 1}");
  resume_refused(meta().string() + ": key 'config': missing");
  write_meta("{\"step\": 1, \"config\": {\"model\": 3}}");
  resume_refused(meta().string() + ": key 'config.model': expected an object (got 3)");
  write_meta("{\"version\": 9, \"step\": 1, \"config\": {}}");
  resume_refused(meta().string() + ": key 'version': expected 1 to 3 (got 9)");
}

// 1e300 was compared as a setting ("a different layout"), a negative unit size hidden in "checkpoint 5 units,
// flags 5 units": the schema check now names the key.
TEST_F(HostileCheckpoint, OutOfRangeNumbersAreNamedByKey) {
  const nlohmann::json original = read_meta();
  const std::string whole = "expected a whole number from 1 to 9223372036854775807 (got ";
  edit_meta([](nlohmann::json& m) { m["config"]["model"]["dim"] = 1e300; });
  resume_refused(meta().string() + ": key 'config.model.dim': " + whole + "1e+300)");
  write_meta(original.dump());
  edit_meta([](nlohmann::json& m) { m["config"]["model"]["layers"] = 4.5; });
  resume_refused(meta().string() + ": key 'config.model.layers': " + whole + "4.5)");
  write_meta(original.dump());
  edit_meta([](nlohmann::json& m) { m["config"]["units"][1]["params"] = -5; });
  resume_refused(meta().string() + ": key 'config.units[1].params': " + whole + "-5)");
  write_meta(original.dump());
  edit_meta([](nlohmann::json& m) { m["config"]["units"][0]["padded_params"] = "many"; });
  resume_refused(meta().string() + ": key 'config.units[0].padded_params': " + whole + "\"many\")");
  write_meta(original.dump());
  edit_meta([](nlohmann::json& m) { m["config"]["units"] = 5; });
  resume_refused(meta().string() + ": key 'config.units': expected an array (got 5)");
  write_meta(original.dump());
  edit_meta([](nlohmann::json& m) { m["config"]["world_size"] = 0; });
  resume_refused(meta().string() + ": key 'config.world_size': expected a whole number from 1 to 2147483647 (got 0)");
}

// 90,000 levels overflowed the stack (SIGSEGV) when the configurations were compared.
TEST_F(HostileCheckpoint, DeeplyNestedMetaIsRefusedWithoutACrash) {
  write_meta("{\"step\": 1, \"config\": {\"x\": " + std::string(90000, '[') + std::string(90000, ']') + "}}");
  resume_refused(meta().string() + ": nested more than 32 deep");
}

// Today a shard with flipped payload bytes loads silently; its CRC-32 now refuses it by name.
TEST_F(HostileCheckpoint, FlippedShardBytesAreRefusedByName) {
  const fs::path shard = ckpt() / "step_1" / "rank0.bin";
  std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(fs::file_size(shard) / 2));
  char c = 0;
  f.read(&c, 1);
  f.seekp(std::streamoff(fs::file_size(shard) / 2));
  c = char(c ^ 0x10);
  f.write(&c, 1);
  f.close();
  resume_refused(shard.string() + ": damaged: checksum mismatch");
}

TEST_F(HostileCheckpoint, TruncatedShardIsRefusedByName) {
  const fs::path shard = ckpt() / "step_1" / "rank0.bin";
  fs::resize_file(shard, fs::file_size(shard) - 100);
  resume_refused(shard.string() + ": damaged: ");
}

// Each shard records its step, rank, world and the digest of the layout settings (checkpoint version 3): one
// copied in from elsewhere was loaded silently (issue #40).
TEST_F(HostileCheckpoint, ShardFromAnotherStepIsRefused) {
  const fs::path shard = ckpt() / "step_1" / "rank0.bin";
  fs::copy_file(ckpt() / "step_0" / "rank0.bin", shard, fs::copy_options::overwrite_existing);
  resume_refused(shard.string() + ": written at step 0, but it lies in step_1");
}

// A shard of a run with other layout settings, or another world size, from a checkpoint of the same step.
class ForeignShard : public HostileCheckpoint {
 protected:
  void expect_foreign(int ranks, const std::vector<std::string>& flags, const std::string& message) {
    TempDir other;
    std::vector<std::string> args = {"--steps", "2", "--checkpoint-dir", (other.path() / "ckpt").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = run_ranks(ranks, args, other.path());
    for (auto& k : r) ASSERT_EQ(k.rc, 0) << k.stderr_text();
    const fs::path shard = ckpt() / "step_1" / "rank0.bin";
    fs::copy_file(other.path() / "ckpt" / "step_1" / "rank0.bin", shard, fs::copy_options::overwrite_existing);
    resume_refused(shard.string() + ": " + message);
  }
};

TEST_F(ForeignShard, FromAnotherWorldSizeIsRefused) {
  // full_shard pads each unit to a multiple of 2, so the lengths differ too; the world is named first.
  expect_foreign(2, {}, "written by a run of 2 ranks, but this run has 1");
}

// With one rank no_shard and full_shard hold the same tensors: only the digest tells the shard is foreign.
TEST_F(ForeignShard, FromAnotherConfigurationIsRefused) {
  expect_foreign(1, {"--sharding", "no_shard"}, "written by a run with other layout settings (config digest ");
}

// A listening socket on `port` on every address (IPv6 and IPv4), held until closed; -1 when it cannot be had.
int hold_port(int port) {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(uint16_t(port));
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 1) == 0) return fd;
    close(fd);
    if (errno == EADDRINUSE) return -1;
  }
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(uint16_t(port));
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 1) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// A one-rank run met itself through a TCP store on MASTER_PORT (29500 by default) and failed when another
// program held it. It binds no port now: it trains while the test holds its MASTER_PORT.
TEST(OneRank, BindsNoPort) {
  TempDir dir;
  std::vector<int> ports = {free_port()};
  std::vector<int> held = {hold_port(ports[0])};
  ASSERT_GE(held[0], 0) << "port " << ports[0];
  // The default port too, when this test can hold it (another program may have it already).
  if (int fd = hold_port(29500); fd >= 0) ports.push_back(29500), held.push_back(fd);
  for (size_t i = 0; i < ports.size(); ++i) {
    auto r = start_ranks(1, {"--steps", "1"}, dir.path(), -1, {}, ports[i]);
    wait_ranks(r, std::chrono::seconds(120));
    EXPECT_EQ(r[0].rc, 0) << "MASTER_PORT " << ports[i] << ": " << r[0].stderr_text();
    EXPECT_NE(r[0].stdout_text().find("step 0 loss"), std::string::npos) << r[0].stdout_text();
  }
  for (int fd : held) close(fd);
}

// Rank 0 of a 2-rank run whose port is held: one line saying so at once, not "did not complete within 60 s"
// and 347 characters of libtorch's text. Rank 1 never starts: the refusal cannot wait for it.
TEST(TwoRanks, ABusyPortIsNamedInOneShortLine) {
  TempDir dir;
  const int port = free_port();
  const int fd = hold_port(port);
  ASSERT_GE(fd, 0) << "port " << port;
  auto r = start_ranks(1, {"--steps", "1"}, dir.path(), /*world=*/2, {}, port);
  wait_ranks(r, std::chrono::seconds(120));
  close(fd);
  const std::string err = r[0].stderr_text();
  EXPECT_EQ(r[0].rc, 2) << err;
  EXPECT_EQ(err, "shardscope-train: rank 0: error: rank 0 cannot host the rendezvous at 127.0.0.1:" +
                     std::to_string(port) + ": the port is in use (set MASTER_PORT to a free port)\n");
}

}  // namespace
}  // namespace shardscope::test
