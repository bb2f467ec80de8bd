"""minfer.profile_torch on torchvision models and an LSTM: the papers' and PyTorch hooks' MACs
(README, "Models exported from PyTorch"), with BatchNormalization visible and folded."""
import pytest

import minfer
from python_test_util import MACHINE

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")


@pytest.mark.parametrize("name, macs, batch_norms",
                         [("resnet18", 1_814_073_344, 20), ("mobilenet_v2", 300_774_272, 52)])
def test_torchvision_models(name, macs, batch_norms):
    torch.manual_seed(0)
    module = getattr(torchvision.models, name)(weights=None)
    module.train()
    report = minfer.profile_torch(module, torch.randn(1, 3, 224, 224), runs=1, warmup=0, **MACHINE)
    assert report.totals["macs"] == macs
    assert module.training  # the module's mode is given back
    # Exported with BatchNormalization kept: each is folded into its convolution.
    actions = report.json["passes"]["actions"]
    assert sum(a["pass"] == "fold_bn" and a["action"] == "folded" for a in actions) == batch_norms
    assert not any(op["type"] == "BatchNormalization" for op in report.ops)

    kept = minfer.profile_torch(module, torch.randn(1, 3, 224, 224), fold_bn=False, runs=1, warmup=0, **MACHINE)
    assert sum(op["type"] == "BatchNormalization" for op in kept.ops) == batch_norms
    assert kept.totals["macs"] == macs


class LstmWithHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, num_layers=2)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


def test_lstm():
    # 12 steps x batch 2 x 4 gates x 32 x (16 + 32) + the same with 32 inputs, + the head.
    report = minfer.profile_torch(LstmWithHead(), torch.rand(12, 2, 16), runs=1, warmup=0, **MACHINE)
    assert report.totals["macs"] == 12 * 2 * 4 * 32 * (16 + 32) + 12 * 2 * 4 * 32 * (32 + 32) + 12 * 2 * 32 * 10
    assert report.totals["macs"] == 351_744


def test_several_inputs_and_a_bad_keyword():
    class Add(torch.nn.Module):
        def forward(self, a, b):
            return torch.relu(a + b)

    report = minfer.profile_torch(Add(), (torch.rand(2, 3), torch.rand(2, 3)), runs=1, warmup=0, **MACHINE)
    assert [i["name"] for i in report.json["model"]["inputs"]] == ["input_0", "input_1"]
    with pytest.raises(TypeError):
        minfer.profile_torch(Add(), (torch.rand(2, 3), torch.rand(2, 3)), no_such_keyword=1)
