#include "viewer/app/load_progress_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

#include <algorithm>

#include "viewer/model/load_status.h"

namespace shardscope::viewer {

LoadProgressBar::LoadProgressBar(QWidget* parent) : QWidget(parent) {
  setObjectName("loadProgress");
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(4, 2, 4, 2);
  label_ = new QLabel(this);
  label_->setObjectName("loadStatus");
  bar_ = new QProgressBar(this);
  bar_->setRange(0, 1000);
  bar_->setTextVisible(false);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName("cancelLoad");
  row->addWidget(label_, 2);
  row->addWidget(bar_, 3);
  row->addWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    for (Loader* l : loaders_)
      if (l->busy()) l->cancel();
    label_->setText(tr("cancelling…"));
    cancel_->setEnabled(false);
  });
  hide();
}

void LoadProgressBar::watch(Loader* loader) {
  loaders_.push_back(loader);
  connect(loader, &Loader::started, this, [this] {
    label_->setText(tr("opening…"));
    bar_->setRange(0, 0);  // busy until the first report
    cancel_->setEnabled(true);
    show();
  });
  connect(loader, &Loader::progress, this, &LoadProgressBar::update);
  connect(loader, &Loader::finished, this, &LoadProgressBar::loaderFinished);
}

void LoadProgressBar::update(const plugins::LoadProgress& p) {
  if (!cancel_->isEnabled()) return;  // cancelling: the reports still queued say nothing new
  label_->setText(QString::fromStdString(load_status_text(p)));
  bar_->setRange(0, 1000);
  bar_->setValue(load_permille(p));
}

void LoadProgressBar::loaderFinished() {
  if (std::none_of(loaders_.begin(), loaders_.end(), [](Loader* l) { return l->busy(); })) hide();
}

}  // namespace shardscope::viewer
