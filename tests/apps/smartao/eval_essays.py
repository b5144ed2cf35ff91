"""The rubric-scored essays of the eval set (all written for this project; none is a real applicant's).

Each item: `id`, `levels` (the intended level of every criterion of the bundled AO rubric),
`text`, `points` (per criterion, pieces of the sentences a good reason must point at: a reason
points right when one of its quotes holds one of them) and, for the partly copied essay,
`refs` (the published text its copied sentences come from). `average` names, for a lopsided
essay, the average essay of its language it must be told apart from.
"""

from __future__ import annotations

from typing import Any


def lv(m: int, e: int, r: int, f: int, x: int) -> dict[str, int]:
    return dict(motivation=m, evidence=e, reflection=r, fit=f, expression=x)


ORIGINAL: list[dict[str, Any]] = [
    {"id": "weak", "lang": "en", "levels": lv(1, 1, 1, 1, 1),
     "text": "i want go to your university. it is good univercity and famous. i like many thing , "
             "sports and game. i will do my best best in the future. thank you",
     "points": {"motivation": ["i want go to your university", "good univercity and famous"],
                "evidence": ["i like many thing", "i want go to your university"],
                "reflection": ["i will do my best", "thank you"],
                "fit": ["your university", "good univercity"],
                "expression": ["i want go", "univercity", "many thing", "best best"]}},
    {"id": "generic", "lang": "en", "levels": lv(2, 2, 2, 2, 2),
     "text": "I want to study economics at Midlands University because economics is important for society. "
             "In high school I was in the tennis club and the student council, and I did volunteer work. "
             "I learned many things from these activities. I think Midlands University is a good place "
             "for me. I will work hard.",
     "points": {"motivation": ["economics is important for society"],
                "evidence": ["tennis club and the student council"],
                "reflection": ["I learned many things"],
                "fit": ["Midlands University"],
                "expression": ["I want to study economics", "I learned many things", "I will work hard",
                               "tennis club", "good place"]}},
    {"id": "episode", "lang": "en", "levels": lv(3, 3, 3, 2, 3),
     "text": "I want to study public health because of my grandmother's diabetes. For two years I helped her "
             "record her blood sugar every evening, and I noticed that her numbers improved when she walked "
             "after dinner. I made a simple chart for her fridge, and she started walking four times a week. "
             "From this I learned that clear information changes what people do. I hope to study public "
             "health at Northfield University.",
     "points": {"motivation": ["because of my grandmother's diabetes"],
                "evidence": ["I helped her record", "I made a simple chart"],
                "reflection": ["clear information changes what people do"],
                "fit": ["Northfield University"],
                "expression": ["I want to study public health", "I made a simple chart", "From this I learned",
                               "I hope to study"]}},
    {"id": "strong", "lang": "en", "levels": lv(4, 4, 4, 4, 4),
     "text": "When our town's only bus line was cut in 2023, my neighbour, who is eighty, stopped going to "
             "the clinic. I surveyed forty elderly residents with my friend Kenta, presented the results to "
             "the town council, and we helped start a volunteer ride service that now makes thirty trips a "
             "month. Leading the survey taught me that data only matters when it is told as people's "
             "stories, so I now interview before I count. I want to study regional planning at Northfield "
             "University because Professor Sato's course on rural mobility and the field lab in Akita would "
             "let me test ride-sharing models for towns like mine, which is the career I plan.",
     "points": {"motivation": ["only bus line was cut", "I want to study regional planning"],
                "evidence": ["I surveyed forty elderly residents"],
                "reflection": ["so I now interview before I count"],
                "fit": ["Professor Sato's course"],
                "expression": ["When our town's only bus line", "I surveyed", "Leading the survey",
                               "I want to study regional planning"]}},
    {"id": "story-no-goal", "lang": "en", "levels": lv(2, 4, 3, 1, 3), "average": "episode",
     "text": "Last summer I organised a beach clean-up with twelve classmates. I contacted the city office, "
             "borrowed equipment, and divided the beach into zones; in one morning we collected 85 kg of "
             "plastic and reported the types to the city. I learned that a task becomes possible when it is "
             "split into small parts that people can own. I would like to go to university.",
     "points": {"motivation": ["I would like to go to university"],
                "evidence": ["I contacted the city office", "I organised a beach clean-up"],
                "reflection": ["a task becomes possible"],
                "fit": ["I would like to go to university"],
                "expression": ["Last summer I organised", "I contacted", "I learned that", "I would like"]}},
    {"id": "goal-no-story", "lang": "en", "levels": lv(3, 1, 1, 3, 3), "average": "episode",
     "text": "I want to become a data scientist who helps hospitals reduce waiting times, because long waits "
             "stop people from getting care early. Westbrook University's statistics programme offers "
             "courses in machine learning and a hospital internship, which match this goal. I will use "
             "these to prepare for work in healthcare.",
     "points": {"motivation": ["I want to become a data scientist"],
                "evidence": ["I want to become a data scientist", "I will use these"],
                "reflection": ["I will use these", "I want to become"],
                "fit": ["statistics programme offers"],
                "expression": ["I want to become", "Westbrook University", "I will use these"]}},
]

_EN_FOODBANK = ("Volunteering at the food bank taught me that hunger is often invisible. Every Saturday I sorted "
                "donations and talked with families who came in quietly after work. I realised that dignity "
                "matters as much as food, and I began to arrange the pantry so that people could choose their "
                "own items.")

ADDED: list[dict[str, Any]] = [
    {"id": "ja-average", "lang": "ja", "levels": lv(3, 3, 2, 2, 3),
     "text": "【志望理由】\n私は貴学の経済学部を志望します。高校二年生のとき、通学路の商店街で空き店舗が増えていることに"
             "気づき、地域の経済に興味を持ちました。\n\n【活動】\n文化祭では、クラスの仲間と商店街のお店を紹介する地図を作り、"
             "十五軒のお店に話を聞きに行きました。この経験から多くのことを学びました。\n\n【将来】\n大学では経済について"
             "学び、将来は地域の役に立つ仕事がしたいです。\n",
     "points": {"motivation": ["空き店舗が増えている", "地域の経済に興味"],
                "evidence": ["十五軒のお店に話を聞き"],
                "reflection": ["多くのことを学びました"],
                "fit": ["経済学部を志望", "大学では経済について"],
                "expression": ["経済学部を志望", "十五軒", "多くのことを学びました", "地域の役に立つ"]}},
    {"id": "ja-strong", "lang": "ja", "levels": lv(4, 4, 4, 4, 4),
     "text": "【志望理由】\n私は貴学の総合政策学部で、高齢者の移動を支える仕組みを研究したいと考えています。中学三年生の冬、"
             "祖父が運転免許を返納してから外出しなくなり、好きだった囲碁会にも通えなくなりました。移動の手段を失うことが"
             "人のつながりまで奪うのだと知り、この問題に取り組むと決めました。\n\n【活動】\n高校では地域の交通を調べる班の"
             "リーダーを務めました。私は町内の高齢者六十人にアンケートを行い、週に一度でも送迎があれば外出したい人が七割"
             "いることを示しました。その結果を市の交通政策課で発表し、翌年から公民館と病院を結ぶ乗り合いタクシーの試験"
             "運行が始まりました。\n\n【学んだこと】\n調査を通して、数字だけでは人は動かず、一人ひとりの声と組み合わせて"
             "初めて伝わることを学びました。それ以来、発表では必ず利用者の話を添えるようにしており、生徒会の提案でも同じ"
             "方法で賛同を集めました。\n\n【貴学で学びたいこと】\n貴学の山田教授の地域交通論と、自治体と連携したフィールド"
             "ワーク演習で、乗り合い交通の費用と効果を分析する方法を身につけたいです。将来は自治体の交通計画に携わり、"
             "免許を返納しても暮らしが続く町をつくります。\n",
     "points": {"motivation": ["祖父が運転免許を返納", "高齢者の移動を支える仕組み"],
                "evidence": ["高齢者六十人にアンケート", "交通政策課で発表"],
                "reflection": ["利用者の話を添える", "一人ひとりの声と組み合わせて"],
                "fit": ["山田教授の地域交通論"],
                "expression": ["総合政策学部", "リーダーを務めました", "調査を通して", "山田教授"]}},
    {"id": "ja-story-no-goal", "lang": "ja", "levels": lv(1, 4, 3, 1, 3), "average": "ja-average",
     "text": "高校二年生の夏、私は陸上部の部長として、部員二十人の練習計画を作り直しました。\nそれまでは全員が同じ練習を"
             "していたので、けがをする部員が多く、大会前に三人が走れなくなりました。\n私は一人ひとりと面談して目標と体の"
             "状態を聞き、種目ごとに三つの班に分けた練習表を作りました。\nその結果、次の大会ではけが人が一人も出ず、五人が"
             "自己ベストを更新しました。\nこの経験から、同じ目標に向かう仲間でも、必要な支えは一人ずつ違うことを学びました。\n",
     "points": {"motivation": ["陸上部の部長として", "必要な支えは一人ずつ違う"],
                "evidence": ["一人ひとりと面談して", "自己ベストを更新"],
                "reflection": ["必要な支えは一人ずつ違う"],
                "fit": ["必要な支えは一人ずつ違う", "陸上部の部長として"],
                "expression": ["陸上部の部長", "一人ひとりと面談", "その結果", "この経験から"]}},
    {"id": "ja-goal-no-story", "lang": "ja", "levels": lv(3, 1, 1, 3, 3), "average": "ja-average",
     "text": "【志望理由】\n私は将来、食品の廃棄を減らす仕組みを作る仕事に就きたいと考えています。日本では毎年多くの食品が"
             "捨てられており、これは環境にも経済にも大きな損失です。\n貴学の農学部では食品流通と環境経済を両方学べるため、"
             "この目標に最適だと考えています。\n入学後はこれらの授業を通して、廃棄を減らす方法を習得したいです。\n",
     "points": {"motivation": ["食品の廃棄を減らす仕組み", "大きな損失"],
                "evidence": ["食品の廃棄を減らす仕組み", "廃棄を減らす方法を習得"],
                "reflection": ["廃棄を減らす方法を習得", "食品の廃棄を減らす仕組み"],
                "fit": ["食品流通と環境経済"],
                "expression": ["食品の廃棄", "農学部", "入学後"]}},
    {"id": "ja-weak", "lang": "ja", "levels": lv(1, 2, 1, 1, 2),
     "text": "私はこの大学に入りたいです。。有名で、いい大学だと思う。高校では色々な事をがんばりました,部活も勉強も"
             "がんばりました。大学ではいろいろな本を見れるのも楽しみです。大学でもがんばりたいです。\n",
     "points": {"motivation": ["この大学に入りたい", "いい大学だと思う"],
                "evidence": ["色々な事をがんばりました", "部活も勉強も"],
                "reflection": ["大学でもがんばりたい", "部活も勉強も", "色々な事"],
                "fit": ["この大学に入りたい", "いい大学だと思う", "いろいろな本"],
                "expression": ["入りたいです。。", "思う", "がんばりました,", "見れる"]}},
    {"id": "en-copied", "lang": "en", "levels": lv(2, 1, 1, 4, 3), "refs": [("foodbank.txt", _EN_FOODBANK)],
     "text": "I want to study social policy at Eastfield University because poverty in my city worries me. "
             + " ".join(_EN_FOODBANK.split(". ")[:2]) .replace("invisible Every", "invisible. Every") + ". "
             "I think more support is needed for these families. Eastfield's course on welfare systems and its "
             "community placement year would help me see how support reaches people.",
     "points": {"motivation": ["poverty in my city worries me"],
                "evidence": ["I want to study social policy", "more support is needed"],
                "reflection": ["more support is needed", "I want to study social policy", "would help me see"],
                "fit": ["course on welfare systems"],
                "expression": ["I want to study social policy", "I think more support", "Eastfield's course"]}},
]

SET = ORIGINAL + ADDED
