// The repair-note schema and validator, the append-only JSON Lines store, and reading notes files.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "note_fixtures.h"
#include "core/jsonl_file.h"
#include "supervision/note_schema.h"
#include "test_support.h"

namespace ptxbench::supervision {
namespace {

namespace fs = std::filesystem;
using ptxbench::testing::make_test_note;
using ptxbench::testing::note_object;

TEST(SupervisionSchema, ParsesAndRejects) {
  auto parsed = json_schema::parse(repair_note_schema_text());
  ASSERT_TRUE(parsed) << parsed.err().message;
  EXPECT_TRUE(repair_note_schema().validate(note_object({"wgmma.fence"})));

  auto bad = note_object({"wgmma.fence", "tma"});
  bad["instruction_notes"][1].erase("diagnostics");
  bad["instruction_notes"][0]["do_not_do"] = ordered_json::array();
  bad["tags"] = "wgmma";
  bad["extra"] = 1;
  auto problems = repair_note_schema().problems(bad);
  auto has = [&](const std::string& p) { return std::find(problems.begin(), problems.end(), p) != problems.end(); };
  EXPECT_TRUE(has("instruction_notes[1].diagnostics: missing required field"));
  EXPECT_TRUE(has("instruction_notes[0].do_not_do: 0 items, at least 1"));
  EXPECT_TRUE(has("tags: expected array, got string"));
  EXPECT_TRUE(has("extra: unknown field (expected one of: summary, instruction_notes, tags)"));
  EXPECT_EQ(problems.size(), 4u);

  auto empty = note_object({"x"});
  empty["summary"] = "";
  EXPECT_EQ(repair_note_schema().validate(empty).err().message, "summary: must not be empty");
  auto long_summary = note_object({"x"});
  long_summary["summary"] = std::string(1501, 'a');
  EXPECT_EQ(repair_note_schema().validate(long_summary).err().message, "summary: too long: 1501 characters, at most 1500");
  auto nine = note_object({"1", "2", "3", "4", "5", "6", "7", "8", "9"});
  EXPECT_EQ(repair_note_schema().validate(nine).err().message, "instruction_notes: 9 items, at most 8");
  // Lengths count code points, not bytes: 1500 'é' fit.
  std::string accents;
  for (int i = 0; i < 1500; ++i) accents += "é";
  long_summary["summary"] = accents;
  EXPECT_TRUE(repair_note_schema().validate(long_summary));
  // A schema may only use what the validator enforces.
  auto unsupported = json_schema::parse(R"({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})");
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.err().message, "schema properties.a.pattern: unsupported keyword");
}

TEST(SupervisionJsonl, TornTailIsReportedAndCutBeforeAppending) {
  auto dir = ptxbench::testing::make_temp_dir("jsonl");
  fs::path file = dir / "x.jsonl";
  ASSERT_TRUE(write_file_atomic(file, "{\"format\":\"f/1\",\"a\":1}\n{\"format\":\"f/1\",\"a\":2}\n{\"format\":\"f/1\",\"a\":"));
  auto c = read_jsonl(file, 1 << 20);
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->records.size(), 2u);
  EXPECT_TRUE(c->torn_tail);
  {
    auto app = jsonl_appender::open(file, "f/1");
    ASSERT_TRUE(app) << app.err().message;
    ASSERT_TRUE((*app)->append({{"format", "f/1"}, {"a", 3}}));
  }
  auto text = read_file(file, 1 << 20);
  EXPECT_EQ(*text, "{\"format\":\"f/1\",\"a\":1}\n{\"format\":\"f/1\",\"a\":2}\n{\"format\":\"f/1\",\"a\":3}\n");
  // A kill in the first bytes of the first record leaves a prefix of its beginning: cut.
  ASSERT_TRUE(write_file_atomic(file, "{\"for"));
  ASSERT_TRUE(jsonl_appender::open(file, "f/1"));
  EXPECT_EQ(*read_file(file, 1 << 20), "");
  // A torn multi-byte character at the end is a torn tail, not a binary file.
  ASSERT_TRUE(write_file_atomic(file, "{\"a\":1}\n{\"a\":\"\xC3"));
  c = read_jsonl(file, 1 << 20);
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_TRUE(c->torn_tail);
  ASSERT_TRUE(write_file_atomic(file, "{\"a\":1}\n\n"));
  EXPECT_EQ(read_jsonl(file, 1 << 20).err().message, file.string() + ":2: blank line (expected one JSON object per line)");
  fs::remove_all(dir);
}

// Issue 27, new-user probe 1: a file without a final newline that this appender did not write (a note,
// a one-line trajectory, a record of another format, a complete record) is refused and left as it was.
TEST(SupervisionJsonl, ALastLineThatIsNotHalfOfOurRecordIsNeverCut) {
  auto dir = ptxbench::testing::make_temp_dir("jsonl");
  fs::path file = dir / "important.txt";
  for (const std::string& text : {std::string("remember: the TMA box is 64x64"), std::string("{\"format\":\"ptxbench.trajectory/1\",\"turns\":[]}"),
                                  std::string("{\"format\":\"other/1\",\"a\":"), std::string("{\"format\":\"f/1\",\"a\":1}"),
                                  std::string("{\"format\":\"f/1\"}\nfree text")}) {
    ASSERT_TRUE(write_file_atomic(file, text));
    auto app = jsonl_appender::open(file, "f/1");
    ASSERT_FALSE(app) << text;
    EXPECT_NE(app.err().message.find("is not a half-written f/1 record"), std::string::npos) << app.err().message;
    EXPECT_EQ(*read_file(file, 1 << 20), text) << "nothing cut, nothing appended";
  }
  fs::remove_all(dir);
}

class SupervisionNotesFile : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = ptxbench::testing::make_temp_dir("notesfile"); }
  void TearDown() override { fs::remove_all(m_dir); }
  std::string error_of(const std::string& text) {
    fs::path f = m_dir / "n.jsonl";
    EXPECT_TRUE(write_file_atomic(f, text));
    auto s = read_note_set(f);
    EXPECT_FALSE(s);
    return s ? "" : s.err().message;
  }
  fs::path m_dir;
};

TEST_F(SupervisionNotesFile, RoundTripWithHashes) {
  auto a = make_test_note({"k1", "gemm_n7168_k5120", "t0", "__global__ void a() {}"});
  auto b = make_test_note({"k2", "gemm_n7168_k5120", "t1", "__global__ void b() {}", "fix", {"x", "y"}, 0.4});
  auto file = ptxbench::testing::write_notes_file(m_dir / "n.jsonl", {a, b});
  auto set = read_note_set(file);
  ASSERT_TRUE(set) << set.err().message;
  ASSERT_EQ(set->notes.size(), 2u);
  EXPECT_EQ(set->sha256, sha256_hex(*read_file(file, 1 << 20)));
  EXPECT_EQ(set->notes[1].instructions.size(), 2u);
  EXPECT_EQ(set->notes[1].pair.fixed_speedup, 0.4);
  EXPECT_EQ(set->notes[0].pair.source.trajectory, "t0");
  EXPECT_EQ(set->notes[0].pair.wrong_sha256, sha256_hex("__global__ void a() {}"));
}

TEST_F(SupervisionNotesFile, OtherFormatsAndDamageAreOneLineErrors) {
  auto a = make_test_note({"k1", "gemm_n7168_k5120", "t0", "__global__ void a() {}"});
  std::string line = to_json(a).dump();
  std::string f = (m_dir / "n.jsonl").string();
  EXPECT_EQ(error_of(R"({"id": "x", "task": "gemm", "wrong": {}, "correct": {}})" "\n"),
            f + ":1: not a repair note: an object without a \"format\" field (expected \"format\": "
                "\"ptxbench.repair-note/1\"; a pairs file is turned into notes by `ptxbench notes collect`)");
  EXPECT_NE(error_of(R"({"format": "ptxbench.fixit-pairs/1"})" "\n").find("not a repair note: format 'ptxbench.fixit-pairs/1'"),
            std::string::npos);
  EXPECT_NE(error_of("model,arch\nx,y\n").find(f + ":1: invalid JSON"), std::string::npos);
  EXPECT_EQ(error_of(""), f + ": empty file");
  EXPECT_EQ(error_of(line + "\n" + line + "\n"), f + ":2: key 'k1' appears twice");
  EXPECT_NE(error_of(line + "\n" + line.substr(0, 40)).find("the last line is incomplete"), std::string::npos);
  auto tampered = to_json(a);
  tampered["wrong_kernel"] = "__global__ void changed() {}";
  EXPECT_EQ(error_of(tampered.dump() + "\n"),
            f + ":1: pair.wrong_kernel_sha256 does not match wrong_kernel (the file was edited or damaged)");
  auto invalid = to_json(a);
  invalid["note"]["tags"] = ordered_json::array();
  EXPECT_EQ(error_of(invalid.dump() + "\n"), f + ":1: note: tags: 0 items, at least 1");
  EXPECT_NE(error_of(std::string("\x7f" "ELF\0\0", 6)).find("binary file"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::supervision
