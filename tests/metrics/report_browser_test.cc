// Renders the HTML report in headless Chromium (Debian's `chromium`): the page must load with no
// console error, uncaught exception or Content-Security-Policy violation (the report's own hooks
// write those into #report-errors, read back from --dump-dom), and a screenshot must come out.
// Label: browser. Skips when /usr/bin/chromium is missing (scripts/setup.sh installs it).
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "core/process.h"
#include "metrics/html_report.h"
#include "metrics/inputs.h"
#include "run_dir_fixtures.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;

const fs::path k_chromium = "/usr/bin/chromium";

class ReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(k_chromium)) GTEST_SKIP() << k_chromium << " is missing (apt-get install chromium)";
    m_dir = testing::make_temp_dir("report-browser");
  }
  void TearDown() override {
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }

  process_result chromium(const std::vector<std::string>& extra, const fs::path& page) {
    process_spec spec;
    spec.argv = {k_chromium.string(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + (m_dir / "profile").string()};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.argv.push_back("file://" + fs::absolute(page).string());
    spec.timeout_s = 120;
    return run_process(spec);
  }

  /// Returns the text inside <div id="report-errors">...</div> of the rendered DOM.
  std::string rendered_errors(const fs::path& page, std::string* dom_out = nullptr) {
    auto r = chromium({"--dump-dom", "--virtual-time-budget=3000"}, page);
    EXPECT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err.substr(0, 2000);
    if (dom_out) *dom_out = r.out;
    const std::string open = "<div id=\"report-errors\">";
    auto a = r.out.find(open);
    EXPECT_NE(a, std::string::npos) << "no #report-errors in the DOM dump";
    if (a == std::string::npos) return "<missing>";
    auto b = r.out.find("</div>", a);
    return r.out.substr(a + open.size(), b - a - open.size());
  }

  void expect_screenshot(const fs::path& page, const std::string& name) {
    fs::path out_dir = fs::path(PTXBENCH_TEST_ARTIFACTS);
    fs::create_directories(out_dir);
    fs::path png = out_dir / name;
    fs::remove(png);
    auto r = chromium({"--window-size=1400,1800", "--screenshot=" + png.string()}, page);
    ASSERT_TRUE(r.succeeded()) << describe_exit(r);
    std::ifstream f(png, std::ios::binary);
    std::string head(24, '\0');
    f.read(head.data(), 24);
    ASSERT_EQ(head.substr(0, 8), "\x89PNG\r\n\x1a\n") << png;
    auto be32 = [&](std::size_t at) {
      return (uint32_t(uint8_t(head[at])) << 24) | (uint32_t(uint8_t(head[at + 1])) << 16) |
             (uint32_t(uint8_t(head[at + 2])) << 8) | uint32_t(uint8_t(head[at + 3]));
    };
    EXPECT_EQ(be32(16), 1400u);  // IHDR width
    EXPECT_EQ(be32(20), 1800u);  // IHDR height
    EXPECT_GT(fs::file_size(png), 20000u) << "a blank page compresses far smaller";
    std::cout << "screenshot: " << png.string() << "\n";
  }

  fs::path write_report(const input_spec& spec, const std::string& name) {
    auto in = load_inputs(spec);
    EXPECT_TRUE(in) << in.err().message;
    report_options opt;
    opt.generated_by = "report_browser_test";
    fs::path page = m_dir / name;
    EXPECT_TRUE(write_file_atomic(page, render_html_report(*in, opt)));
    return page;
  }

  fs::path m_dir;
};

TEST_F(ReportBrowser, RunDirReportLoadsCleanAndRenders) {
  input_spec spec;
  spec.run_dirs = {testing::fixtures_dir() / "trajectories/run_small"};
  auto page = write_report(spec, "run.html");
  std::string dom;
  EXPECT_EQ(rendered_errors(page, &dom), "");
  EXPECT_NE(dom.find("data-report-ready=\"1\""), std::string::npos) << "the closing script did not run";
  expect_screenshot(page, "report_run_small.png");
}

TEST_F(ReportBrowser, UpstreamReportLoadsCleanAndRenders) {
  input_spec spec;
  spec.upstream_turns = testing::fixtures_dir() / "upstream/turns_subset.csv";
  spec.upstream_experiments = testing::fixtures_dir() / "upstream/experiments_subset.csv";
  auto page = write_report(spec, "upstream.html");
  EXPECT_EQ(rendered_errors(page), "");
  expect_screenshot(page, "report_upstream_subset.png");
}

// A run where nothing ran on a GPU: the banner that says so is in the rendered page, above the
// flat charts (bench/cpu/report_screenshots.sh commits this screenshot as bench/results/cpu/report_cpu_only.png).
TEST_F(ReportBrowser, CpuOnlyRunShowsItsBanner) {
  input_spec spec;
  spec.run_dirs = {testing_runs::run_cpu_only()};
  auto page = write_report(spec, "cpu_only.html");
  std::string dom;
  EXPECT_EQ(rendered_errors(page, &dom), "");
  auto banner = dom.find("<div id=\"report-cpu-only\" class=\"banner info\" role=\"note\"><p><b>Nothing in this report "
                         "ran on a GPU.</b>");
  EXPECT_NE(banner, std::string::npos);
  EXPECT_LT(banner, dom.find("id=\"table1\""));
  EXPECT_EQ(dom.find("id=\"report-warnings\""), std::string::npos);
  expect_screenshot(page, "report_cpu_only.png");
}

// An incomplete run (one trajectory interrupted, one planned file missing): the warnings banner lists
// both, above every number (bench/results/cpu/report_incomplete.png).
TEST_F(ReportBrowser, IncompleteRunShowsTheWarnings) {
  input_spec spec;
  spec.run_dirs = {testing_runs::incomplete_run(m_dir / "incomplete")};
  auto page = write_report(spec, "incomplete.html");
  std::string dom;
  EXPECT_EQ(rendered_errors(page, &dom), "");
  auto banner = dom.find("<div id=\"report-warnings\" class=\"banner warn\" role=\"alert\"><p><b>2 warnings about the "
                         "data behind these numbers.</b>");
  EXPECT_NE(banner, std::string::npos);
  EXPECT_LT(banner, dom.find("id=\"table1\""));
  EXPECT_NE(dom.find("<li data-kind=\"missing_trajectory\">"), std::string::npos);
  EXPECT_NE(dom.find("<li data-kind=\"unfinished_trajectory\">"), std::string::npos);
  expect_screenshot(page, "report_incomplete.png");
}

// The check can fail: a script error and an external image (blocked by the policy) are both caught.
TEST_F(ReportBrowser, HooksCatchScriptErrorsAndExternalRequests) {
  input_spec spec;
  spec.run_dirs = {testing::fixtures_dir() / "trajectories/run_small"};
  auto in = load_inputs(spec);
  ASSERT_TRUE(in);
  std::string html = render_html_report(*in, {});
  auto body_end = html.rfind("</body>");
  html.insert(body_end, "<img src=\"https://example.invalid/x.png\"><script>no_such_function();</script>");
  fs::path page = m_dir / "broken.html";
  ASSERT_TRUE(write_file_atomic(page, html));
  std::string errors = rendered_errors(page);
  EXPECT_NE(errors.find("no_such_function"), std::string::npos) << errors;
  EXPECT_NE(errors.find("csp: https://example.invalid/x.png"), std::string::npos) << errors;
}

}  // namespace
}  // namespace ptxbench::metrics
